package attack

import (
	"bytes"
	"fmt"
	"github.com/agentura/agentura/internal/testkit/requiretool"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// A full disk: the built agent on a small tmpfs as AGENT_DATA_DIR. /readyz
// says the store is full, an upload and a tool call fail with clear errors
// that show no server path and leave no partial file, and all recovers once
// space is freed. Needs root (mount); skips otherwise unless
// AGENTURA_REQUIRE_TOOLS=1.
func TestFullDisk(t *testing.T) {
	dir := filepath.Join(binDir, "tmpfs-"+t.Name())
	os.MkdirAll(dir, 0o700)
	if out, err := procgroup.CombinedOutput(exec.Command("mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", dir)); err != nil {
		requiretool.Missing(t, fmt.Sprintf("needs root to mount a tmpfs: %v %s", err, out))
	}
	t.Cleanup(func() { procgroup.Run(exec.Command("umount", "-l", dir)) })
	fileBin := fileagentBinary(t)
	data := filepath.Join(dir, "data")
	a := mcptest.NewAgent(t, fileBin, "AGENT_DATA_DIR="+data, "AGENT_MCP_STATELESS=true", "AGENT_MAX_UPLOAD_BYTES=30000000")
	a.Start(t)
	t.Cleanup(func() { a.Stop(t) })
	a.WaitReady(t)

	// Fill the disk but for 4 MiB.
	filler := filepath.Join(dir, "filler")
	f, _ := os.Create(filler)
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()

	// Full to the last byte, files/authorizeUpload (whose ticket is a
	// record) said "write <data>/tmp/rec-…: no space left on device" with
	// no reason code, and left the tmp/rec-… file (E21): now the cause in
	// words and storage_full, nothing left.
	au := do(t, http.MethodPost, a.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"files/authorizeUpload","params":{"name":"a.txt","size":1,"mimeType":"text/plain"}}`),
		"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-11-25")
	if body := string(au.body); strings.Contains(body, dir) || strings.Contains(body, "tmp/") || !strings.Contains(body, "storage_full") || !strings.Contains(body, "full") {
		t.Errorf("files/authorizeUpload on a full disk: %s; want an error saying the storage is full (storage_full), without a path", au)
	}
	if left, _ := filepath.Glob(filepath.Join(data, "tmp", "rec-*")); len(left) > 0 {
		t.Errorf("files/authorizeUpload on a full disk left %v", left)
	}
	os.Truncate(filler, mustSize(t, filler)-4<<20)

	var r reply
	for range 20 { // /readyz answers from its last probe: the next one sees the disk full
		if r = do(t, http.MethodGet, a.URL+"/readyz", nil); r.status == http.StatusServiceUnavailable {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "full") || strings.Contains(string(r.body), dir) {
		t.Errorf("/readyz on a full disk: %s; want 503 saying the store is full, without a path", r)
	}
	r = do(t, http.MethodPost, a.URL+"/uploads", bytes.NewReader(make([]byte, 8<<20)), "X-Filename", "big.bin")
	if r.status < 400 || r.status >= 600 || strings.Contains(string(r.body), dir) {
		t.Errorf("upload on a full disk: %s", r)
	}
	// A tus PATCH that fills the disk: the answer says so, without the
	// path of the upload's file.
	tr := do(t, http.MethodPost, a.URL+"/uploads/tus/", nil, "Tus-Resumable", "1.0.0", "Upload-Length", "8388608", "Upload-Metadata", tusMeta("big.bin"))
	if tr.status != http.StatusCreated {
		t.Errorf("tus creation on a nearly full disk: %s", tr)
	} else {
		p := tusPatch(t, tr.header.Get("Location"), 0, make([]byte, 8<<20))
		if p.status != http.StatusInsufficientStorage || strings.Contains(string(p.body), dir) || !strings.Contains(string(p.body), "full") {
			t.Errorf("tus PATCH on a full disk: %s; want 507 saying the storage is full, without a path", p)
		}
		do(t, http.MethodDelete, tr.header.Get("Location"), nil, "Tus-Resumable", "1.0.0")
	}
	res := call(t, a, "", "archive_files", map[string]any{"sources": []any{dataURI("a.bin", bytes.Repeat([]byte{1}, 6<<20))}})
	if !res.isError || strings.Contains(res.text, dir) || strings.Contains(res.text, "no space left") {
		t.Errorf("tool call on a full disk: %s", trunc(res.text))
	}
	if !strings.Contains(res.text, "full") {
		t.Errorf("the tool error does not say the storage is full: %s", trunc(res.text))
	}
	// Nothing partial is left visible: no file in outputs or staging.
	for _, area := range []string{"outputs", "staging"} {
		filepath.Walk(filepath.Join(data, area), func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() && info.Size() > 0 && strings.HasSuffix(p, "data") {
				t.Errorf("a file is left in %s: %s (%d bytes)", area, p, info.Size())
			}
			return nil
		})
	}

	if left, _ := os.ReadDir(filepath.Join(data, "tmp")); len(left) > 0 {
		t.Errorf("failed writes left %d entries in tmp/", len(left))
	}
	os.Remove(filler)
	a.WaitReady(t)
	if r, u := upload(t, a, "", "after.bin", make([]byte, 8<<20)); r.status != http.StatusCreated || u == "" {
		t.Errorf("upload after space was freed: %s", r)
	}
}

func mustSize(t *testing.T, p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
