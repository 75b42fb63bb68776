package composer

// End-to-end test of composer-agent: the real binary (cmd/composer-agent,
// built with CGO_ENABLED=0 as it ships) on a real port, driven by an
// independent MCP client (mark3labs/mcp-go) over streamable HTTP; produced
// files are downloaded over plain HTTP and read back.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

const (
	e2eProtocol  = mcp.ProtocolVersion20251125 // see examples/fileagent/e2e_test.go
	e2eTimeout   = 60 * time.Second
	readyTimeout = 20 * time.Second
)

var (
	buildOnce sync.Once
	agentBin  string
	buildErr  error
)

// composerBinary builds cmd/composer-agent once per test run, statically
// (CGO_ENABLED=0), as it runs on a scratch image.
func composerBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		agentBin = filepath.Join(testTemp, "composer-agent")
		cmd := exec.Command("go", "build", "-o", agentBin, "github.com/agentura/agentura/cmd/composer-agent")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build cmd/composer-agent with CGO_ENABLED=0: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return agentBin
}

// startComposer runs the agent on a free port and returns its base URL; the
// process gets SIGTERM when the test ends and must exit with status 0.
func startComposer(t *testing.T) string {
	t.Helper()
	bin := composerBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	var logs bytes.Buffer
	var logMu sync.Mutex
	cmd := exec.Command(bin)
	for _, kv := range os.Environ() {
		// No AGENT_* of the developer's shell, and no HOME: on a scratch
		// image there is none, and nothing may need one.
		if !strings.HasPrefix(kv, "AGENT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "AGENT_ADDR="+addr, "AGENT_PUBLIC_URL="+base, "AGENT_DATA_DIR="+t.TempDir(), "AGENT_SHUTDOWN_TIMEOUT=10s")
	w := writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return logs.Write(p) })
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("composer-agent exited with %v after SIGTERM, want status 0", err)
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("composer-agent did not stop within 20s of SIGTERM")
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("agent log:\n%s", logs.String())
			logMu.Unlock()
		}
	})
	deadline := time.Now().Add(readyTimeout)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("composer-agent exited before it was ready: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("composer-agent not ready after %v", readyTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// mcpClient connects mark3labs/mcp-go to base/mcp, protocol pinned.
func mcpClient(t *testing.T, base string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(base+"/mcp", transport.WithHTTPTimeout(e2eTimeout))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(e2eProtocol))
	ctx, cancel := context.WithTimeout(t.Context(), e2eTimeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start MCP client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = e2eProtocol
	req.Params.ClientInfo = mcp.Implementation{Name: "composer-e2e", Version: "1.0.0"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ServerInfo.Name != "composer-agent" {
		t.Errorf("server name %q, want composer-agent", res.ServerInfo.Name)
	}
	return c
}

func call(t *testing.T, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), e2eTimeout)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// e2eFile is one produced file as the contract describes it.
type e2eFile struct {
	DownloadURL string `json:"download_url"`
	Filename    string `json:"filename"`
	MIMEType    string `json:"mime_type"`
	SizeBytes   int64  `json:"size_bytes"`
}

// producedFiles returns the files of a successful result: the flat form for
// one file, "files" for several.
func producedFiles(t *testing.T, res *mcp.CallToolResult) []e2eFile {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", resultText(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var many struct {
		Files []e2eFile `json:"files"`
	}
	var one e2eFile
	if err := json.Unmarshal(raw, &many); err == nil && len(many.Files) > 0 {
		return many.Files
	}
	if err := json.Unmarshal(raw, &one); err != nil || one.DownloadURL == "" {
		t.Fatalf("structured content %s names no file", raw)
	}
	return []e2eFile{one}
}

// fetch downloads f into dir under its file name and checks its size.
func fetch(t *testing.T, f e2eFile, dir string) string {
	t.Helper()
	resp, err := http.Get(f.DownloadURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || int64(len(body)) != f.SizeBytes {
		t.Fatalf("GET %s: %s, %d bytes (%v); want 200 and %d bytes", f.Filename, resp.Status, len(body), err, f.SizeBytes)
	}
	if got := resp.Header.Get("Content-Type"); got != f.MIMEType {
		t.Errorf("%s served as %q, result says %q", f.Filename, got, f.MIMEType)
	}
	path := filepath.Join(dir, filepath.FromSlash(f.Filename))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// testPDF writes a one-page PDF saying text, with fpdf.
func testPDF(t *testing.T, text string) []byte {
	t.Helper()
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.AddPage()
	pdf.SetFont("Helvetica", "", 14)
	pdf.Cell(0, 10, text)
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestE2E(t *testing.T) {
	base := startComposer(t)
	c := mcpClient(t, base)
	chart := textPNG(t, "CHART", 300, 150, color.RGBA{R: 250, G: 230, B: 200, A: 255})
	b64 := base64.StdEncoding.EncodeToString(chart)
	markdown := "# Sales\n\nПродажи растут.\n\n![Sales chart](chart.png)\n"

	t.Run("Schema", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), e2eTimeout)
		defer cancel()
		tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, tool := range tools.Tools {
			raw, _ := json.Marshal(tool.Meta.AdditionalFields["agentura/fileParams"])
			got[tool.Name] = string(raw)
		}
		if got["compose_document"] != `["embeds[].content"]` || got["merge_pdfs"] != `["sources"]` {
			t.Errorf("file parameters = %v, want compose_document [embeds[].content], merge_pdfs [sources]", got)
		}
	})

	t.Run("EmbedsAsObjects", func(t *testing.T) {
		res := call(t, c, "compose_document", map[string]any{
			"markdown": markdown, "format": "pdf", "filename": "sales",
			"embeds": []any{map[string]any{"name": "chart.png", "content": b64, "description": "the chart"}},
		})
		files := producedFiles(t, res)
		if len(files) != 1 || files[0].Filename != "sales.pdf" || files[0].MIMEType != "application/pdf" {
			t.Fatalf("files = %+v, want sales.pdf, application/pdf", files)
		}
		path := fetch(t, files[0], t.TempDir())
		wantText(t, "sales.pdf", pdfText(t, path), "Sales", "Продажи растут", "Sales chart")
		if n := pdfImages(t, path); n != 1 {
			t.Errorf("sales.pdf has %d images, want 1", n)
		}
	})

	t.Run("EmbedsAsOneString", func(t *testing.T) {
		res := call(t, c, "compose_document", map[string]any{
			"markdown": markdown, "format": "docx",
			"embeds": "data:image/png;name=chart.png;base64," + b64,
		})
		files := producedFiles(t, res)
		if len(files) != 1 || files[0].Filename != "sales.docx" {
			t.Fatalf("files = %+v, want sales.docx (named from the title)", files)
		}
		path := fetch(t, files[0], t.TempDir())
		if n := countPrefix(zipMembers(t, path), "word/media/"); n != 1 {
			t.Errorf("sales.docx has %d pictures, want 1", n)
		}
		wantText(t, "sales.docx (via LibreOffice)", pdfText(t, officeToPDF(t, path)), "Sales", "Продажи растут")
	})

	t.Run("EmbedContentEmpty", func(t *testing.T) {
		res := call(t, c, "compose_document", map[string]any{
			"markdown": markdown, "format": "pdf",
			"embeds": []any{map[string]any{"name": "chart.png"}},
		})
		txt := resultText(res)
		t.Logf("error: %s", txt)
		if !res.IsError || !strings.Contains(txt, `"chart.png" was not resolved to a file`) || !strings.Contains(txt, "content is empty") {
			t.Errorf("isError %v, text %q; want the error saying chart.png was not resolved (content is empty)", res.IsError, txt)
		}
	})

	t.Run("MarkdownWithImages", func(t *testing.T) {
		res := call(t, c, "compose_document", map[string]any{
			"markdown": markdown, "format": "md", "filename": "report.md",
			"embeds": []any{map[string]any{"name": "chart.png", "content": b64}},
		})
		files := producedFiles(t, res)
		if len(files) != 2 || files[0].Filename != "report.md" || files[1].Filename != "images/chart.png" || files[1].MIMEType != "image/png" {
			t.Fatalf("files = %+v, want report.md and images/chart.png", files)
		}
		dir := t.TempDir()
		page, _ := os.ReadFile(fetch(t, files[0], dir))
		img, _ := os.ReadFile(fetch(t, files[1], dir))
		if !strings.Contains(string(page), "![Sales chart](images/chart.png)") || !bytes.Equal(img, chart) {
			t.Errorf("report.md = %q (want it to show images/chart.png), image %d bytes (want the %d sent)", page, len(img), len(chart))
		}
	})

	t.Run("PPTXAndHTML", func(t *testing.T) {
		for _, format := range []string{"pptx", "html"} {
			res := call(t, c, "compose_document", map[string]any{
				"markdown": markdown, "format": format,
				"embeds": []any{map[string]any{"name": "chart.png", "content": b64}},
			})
			files := producedFiles(t, res)
			if len(files) != 1 || files[0].Filename != "sales."+format {
				t.Fatalf("files = %+v, want sales.%s", files, format)
			}
			path := fetch(t, files[0], t.TempDir())
			if format == "pptx" {
				wantText(t, "sales.pptx (via LibreOffice)", pdfText(t, officeToPDF(t, path)), "Sales", "Продажи растут")
			}
		}
	})

	t.Run("Errors", func(t *testing.T) {
		notes := base64.StdEncoding.EncodeToString([]byte("just some notes, not a picture at all\n"))
		for _, tc := range []struct {
			name string
			tool string
			args map[string]any
			want []string
		}{
			{"UnknownFormat", "compose_document", map[string]any{"markdown": "# x", "format": "odt"},
				[]string{`unknown format "odt"`, "pdf, docx, pptx, html, md"}},
			{"ImageNotEmbedded", "compose_document", map[string]any{"markdown": "![](missing.png)",
				"embeds": []any{map[string]any{"name": "chart.png", "content": b64}}},
				[]string{`image "missing.png"`, `the embeds given are "chart.png"`}},
			{"EmbedNotAnImage", "compose_document", map[string]any{"markdown": "text",
				"embeds": []any{map[string]any{"name": "notes.txt", "content": notes}}},
				[]string{`embed "notes.txt" is`, "not an image"}},
			{"MarkdownTooLarge", "compose_document", map[string]any{"markdown": strings.Repeat("a", DefaultLimits().MarkdownBytes+1)},
				[]string{"markdown is 2097153 bytes, more than the 2097152 (2.0 MB) allowed"}},
			{"TooManyEmbeds", "compose_document", map[string]any{"markdown": "x", "embeds": manyEmbeds(DefaultLimits().Embeds + 1)},
				[]string{"101 embeds, more than the 100 allowed"}},
			{"NotAPDF", "merge_pdfs", map[string]any{"sources": []any{map[string]any{"name": "notes.txt", "content": notes}}},
				[]string{`"notes.txt" is`, "not a PDF"}},
			{"BrokenPDF", "merge_pdfs", map[string]any{"sources": []any{map[string]any{"name": "bad.pdf",
				"content": base64.StdEncoding.EncodeToString([]byte("%PDF-1.7\nthis is not really a PDF at all\n%%EOF\n"))}}},
				[]string{`"bad.pdf" is not a readable PDF`}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := call(t, c, tc.tool, tc.args)
				txt := resultText(res)
				if !res.IsError {
					t.Fatalf("no tool error; result: %s", txt)
				}
				t.Logf("error: %s", txt)
				for _, w := range tc.want {
					if !strings.Contains(txt, w) {
						t.Errorf("error %q lacks %q", txt, w)
					}
				}
			})
		}
	})

	t.Run("MergePDFs", func(t *testing.T) {
		res := call(t, c, "merge_pdfs", map[string]any{"sources": []any{
			map[string]any{"name": "a.pdf", "content": base64.StdEncoding.EncodeToString(testPDF(t, "First source"))},
			"data:application/pdf;name=b.pdf;base64," + base64.StdEncoding.EncodeToString(testPDF(t, "Second source")),
		}})
		files := producedFiles(t, res)
		if len(files) != 1 || files[0].Filename != "merged.pdf" {
			t.Fatalf("files = %+v, want merged.pdf", files)
		}
		text := pdfText(t, fetch(t, files[0], t.TempDir()))
		if pdfPages(text) != 2 || strings.Index(text, "First source") > strings.Index(text, "Second source") || !strings.Contains(text, "First source") {
			t.Errorf("merged.pdf has %d pages and reads %q; want First source, then Second source, on 2 pages", pdfPages(text), text)
		}
	})
}

// manyEmbeds returns n embed items.
func manyEmbeds(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"name": fmt.Sprintf("p%d.png", i), "content": "data:image/png;base64,AAAA"}
	}
	return out
}
