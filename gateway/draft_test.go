package gateway_test

// The gateway against a third-party server that speaks only the draft MCP
// file contract (internal/testkit/drafttest, written from the draft's
// shapes, not from agentura's packages).

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/gateway"
	"github.com/agentura/agentura/internal/testkit/drafttest"
)

// The gateway moves a file both ways, by name, with a server that speaks
// only the draft: a path under its roots goes up through
// files/authorizeUpload (the field allows upload only) and comes back,
// reversed, through files/authorizeDownload, saved under --out; a small
// file goes inline where the field allows inline only, as a data: URI
// without a name parameter. The gateway declared the draft's files
// capability (SEP-2631 §2) at initialize.
func TestDraftOnlyServerBothWays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := drafttest.Start(t)
	root, out := t.TempDir(), t.TempDir()
	text := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 KB, over the inline limit
	text = append(text, "THE END"...)
	src := filepath.Join(root, "notes.txt")
	if err := os.WriteFile(src, text, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(ctx, gateway.Config{Agents: []gateway.Agent{{URL: d.Endpoint()}}, Roots: []string{root}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := connectHost(t, ctx, g)

	res, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: "reverse", Arguments: map[string]any{"document": src}})
	if err != nil {
		t.Fatal(err)
	}
	line := savedAs.FindStringSubmatch(resultText(res))
	if res.IsError || line == nil {
		t.Fatalf("reverse through the gateway: %q", resultText(res))
	}
	got, err := os.ReadFile(line[2])
	want := slices.Clone(text)
	slices.Reverse(want)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the reversed file saved as %s: %d bytes, %v; want the %d bytes reversed", line[2], len(got), err, len(want))
	}
	args := d.Args()
	arg := args[len(args)-1]
	if !strings.Contains(arg, `"mcp-file://draft.example/in-`) {
		t.Fatalf("the server got %s; want the file URI of its upload", arg)
	}
	if sc, _ := json.Marshal(res.StructuredContent); strings.Contains(string(sc), "mcp-file://") {
		t.Errorf("the host still sees the server's file URI: %s", sc)
	}
	if got := d.FilesDeclared(); len(got) == 0 || got[0] != `{"upload":true,"download":true,"transports":["https"]}` {
		t.Errorf("the server saw the files capability %q at initialize; want §2's", got)
	}

	small := filepath.Join(root, "small.txt")
	os.WriteFile(small, []byte("hello, draft"), 0o644)
	res, err = h.session.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: map[string]any{"document": small}})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "12 bytes") {
		t.Fatalf("count through the gateway: %v %q", err, resultText(res))
	}

	// Over the field's maxSize: refused by the gateway, nothing sent.
	big := filepath.Join(root, "big.txt")
	os.WriteFile(big, bytes.Repeat([]byte("x"), drafttest.MaxSize+1), 0o644)
	before := len(d.Args())
	res, _ = h.session.CallTool(ctx, &mcp.CallToolParams{Name: "reverse", Arguments: map[string]any{"document": big}})
	if !res.IsError || !strings.Contains(resultText(res), "maxSize") {
		t.Fatalf("a file over maxSize: %q", resultText(res))
	}
	if len(d.Args()) != before || d.Pending() != 0 {
		t.Fatalf("a refused file reached the server")
	}
}
