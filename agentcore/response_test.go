package agentcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/filetype"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func download(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestFileResponseOneFile(t *testing.T) {
	svc, _ := serveTestService(t, func(c *Config) { c.EmbedMaxBytes = defaultEmbedMaxBytes })
	ctx := context.Background()
	call := svc.newCall("make", "alice", "")
	defer call.end()
	pngData := pngBytes(t)
	res, err := call.FileResponse(ctx, OutputBytes("chart.png", pngData))
	if err != nil {
		t.Fatal(err)
	}
	st := res.Structured()
	for _, key := range []string{"download_url", "filename", "mime_type", "size_bytes"} {
		if _, ok := st[key]; !ok {
			t.Errorf("structured content lacks %q: %v", key, st)
		}
	}
	if st["filename"] != "chart.png" || st["mime_type"] != "image/png" || st["size_bytes"] != int64(len(pngData)) {
		t.Errorf("structured = %v", st)
	}
	u := st["download_url"].(string)
	if !strings.HasPrefix(u, svc.cfg.PublicURL+"/files/") || !strings.Contains(u, "/chart.png?token=") {
		t.Errorf("download_url = %s", u)
	}
	resp, body := download(t, u)
	if resp.StatusCode != 200 || !bytes.Equal(body, pngData) || resp.Header.Get("Content-Type") != "image/png" {
		t.Errorf("download: %s %s, %d bytes", resp.Status, resp.Header.Get("Content-Type"), len(body))
	}

	out := svc.mcp.Render(ctx, res.outcome())
	raw, _ := json.Marshal(out)
	var wireRes struct {
		Content []map[string]any `json:"content"`
	}
	json.Unmarshal(raw, &wireRes)
	types := []string{}
	for _, c := range wireRes.Content {
		types = append(types, c["type"].(string))
	}
	if strings.Join(types, ",") != "text,resource_link,resource" {
		t.Errorf("content types = %v, want text, resource_link, resource", types)
	}
	want := "Tool produced: chart.png (PNG image, " + filetype.Size(int64(len(pngData))) + ") " + u
	if text := wireRes.Content[0]["text"].(string); text != want {
		t.Errorf("text line = %q, want %q", text, want)
	}
	if link := wireRes.Content[1]; link["uri"] != u || link["name"] != "chart.png" || link["mimeType"] != "image/png" {
		t.Errorf("resource_link = %v", link)
	}
	embedded := wireRes.Content[2]["resource"].(map[string]any)
	if embedded["uri"] != u || embedded["blob"] == nil {
		t.Errorf("embedded resource = %v", embedded)
	}
	if bytes.Contains(mustJSON(t, out.StructuredContent), []byte(embedded["blob"].(string))) {
		t.Error("file bytes leaked into structuredContent")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFileResponseSeveralFilesWithSubPaths(t *testing.T) {
	svc, _ := serveTestService(t, func(c *Config) { c.EmbedMaxBytes = 10 })
	ctx := context.Background()
	call := svc.newCall("make", "alice", "")
	defer call.end()
	dir, err := call.WorkDir()
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.md")
	os.WriteFile(page, []byte("# Report\n![d](images/diagram_002.png)\n"), 0o600)
	before, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	external := filepath.Join(t.TempDir(), "keep.txt")
	os.WriteFile(external, []byte("not mine to move"), 0o600)

	res, err := call.FileResponse(ctx,
		OutputFile("report.md", page),
		OutputBytes("images/diagram_002.png", pngBytes(t)),
		OutputBytes("../../escape/x.txt", []byte("x")),
		OutputBytes("report.md", []byte("same name again")),
		OutputFile("keep.txt", external),
	)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range res.Files {
		names = append(names, f.Filename)
	}
	want := "report.md,images/diagram_002.png,escape/x.txt,report (2).md,keep.txt"
	if strings.Join(names, ",") != want {
		t.Errorf("filenames = %v, want %s", names, want)
	}
	if _, err := os.Stat(page); !os.IsNotExist(err) {
		t.Error("a work-folder output was copied, not moved")
	}
	// The very same inode now sits in the store: handed over, not copied.
	obj, _, err := svc.store.Open(ctx, fileserve.Outputs, "alice", res.stored[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := obj.(*os.File).Stat()
	obj.Close()
	if !os.SameFile(before, after) {
		t.Error("the stored report.md is a copy, not the file the tool wrote")
	}
	if _, err := os.Stat(external); err != nil {
		t.Error("a file outside the work folder was moved away from its owner")
	}
	st := res.Structured()
	if _, flat := st["download_url"]; flat {
		t.Error("several files must not be flat")
	}
	if files, ok := st["files"]; !ok || len(mustJSON(t, files)) == 0 {
		t.Errorf("structured = %v", st)
	}
	if !strings.Contains(res.Files[1].DownloadURL, "/images/diagram_002.png?token=") {
		t.Errorf("sub-path URL = %s", res.Files[1].DownloadURL)
	}
	resp, body := download(t, res.Files[0].DownloadURL)
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "# Report") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") {
		t.Errorf("report.md: %s %q %s", resp.Status, body, resp.Header.Get("Content-Type"))
	}
	out := svc.mcp.Render(ctx, res.outcome())
	var links, embeds int
	for _, c := range out.Content {
		switch c.(type) {
		case *mcp.ResourceLink:
			links++
		case *mcp.EmbeddedResource:
			embeds++
		}
	}
	if links != 5 || embeds != 1 { // only x.txt (1 byte) is under the 10-byte threshold
		t.Errorf("links %d embeds %d", links, embeds)
	}
}

func TestFileResponseFailureKeepsNothing(t *testing.T) {
	svc := newTestService(t, nil)
	ctx := context.Background()
	call := svc.newCall("make", "alice", "")
	defer call.end()
	_, err := call.FileResponse(ctx,
		OutputBytes("a.txt", []byte("first")),
		OutputReader("b.txt", io.MultiReader(strings.NewReader("half"), errReader{})),
	)
	if err == nil || !strings.Contains(err.Error(), `store output "b.txt"`) {
		t.Fatalf("err = %v", err)
	}
	n := 0
	svc.store.Walk(ctx, fileserve.Outputs, func(fileserve.Meta) error { n++; return nil })
	if n != 0 {
		t.Errorf("%d files stayed stored after a failed response", n)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestUniqueName(t *testing.T) {
	long := strings.Repeat("x", 251) + ".pdf" // 255 bytes, the most a segment may hold
	taken := map[string]bool{}
	for _, tc := range []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"report.pdf", "report (2).pdf"},
		{"report.pdf", "report (3).pdf"},
		{"images/a.png", "images/a.png"},
		{"images/a.png", "images/a (2).png"},
		{".env", ".env"},
		{".env", ".env (2)"},
		{long, long},
		{long, strings.Repeat("x", 247) + " (2).pdf"},
	} {
		if got := UniqueName(tc.in, taken); got != tc.want {
			t.Errorf("UniqueName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
