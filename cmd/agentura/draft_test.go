package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/drafttest"
)

// agentura call with a server that speaks only the draft MCP file contract
// (internal/testkit/drafttest): the attached file goes up through
// files/authorizeUpload (the field allows upload only), and the FileValue
// the tool answers comes back through files/authorizeDownload, saved under
// --out with the sha256 of the expected bytes. The CLI declared the draft's
// files capability (§2) at initialize.
func TestCallDraftOnlyServer(t *testing.T) {
	d := drafttest.Start(t)
	dir := t.TempDir()
	text := append(bytes.Repeat([]byte("0123456789abcdef"), 20000), "THE END"...)
	writeFile(t, filepath.Join(dir, "notes.txt"), text)
	r := runCLI(t, dir, "call", d.Endpoint(), "reverse", "--attach", "notes.txt", "--json", `{"document": "notes.txt"}`,
		"--out", "o", "--output", "json")
	if r.code != 0 {
		t.Fatal(r)
	}
	var out callOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err, r)
	}
	want := slices.Clone(text)
	slices.Reverse(want)
	if len(out.Files) != 1 || out.Files[0].Path != "o/reversed.txt" || out.Files[0].SHA256 != sha(want) {
		t.Fatalf("files = %+v; want o/reversed.txt with sha256 %s", out.Files, sha(want))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "o/reversed.txt")); err != nil || sha(b) != sha(want) {
		t.Errorf("o/reversed.txt: %d bytes, %v; want the %d bytes reversed", len(b), err, len(want))
	}
	args := d.Args()
	if len(args) != 1 || !strings.Contains(args[0], `"`+d.URI("in-")) {
		t.Errorf("the server got %v; want the file URI of its upload", args)
	}
	if got := d.FilesDeclared(); len(got) == 0 || got[0] != `{"upload":true,"download":true,"transports":["https"]}` {
		t.Errorf("the server saw the files capability %q at initialize; want SEP-2631 §2's", got)
	}
}
