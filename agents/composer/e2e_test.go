package composer

// End-to-end test of composer-agent: the real binary (cmd/composer-agent,
// built with CGO_ENABLED=0 as it ships) on a real port, driven by an
// independent MCP client (mark3labs/mcp-go) over streamable HTTP; produced
// files are downloaded over plain HTTP and read back.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/color"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-pdf/fpdf"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/internal/testkit/mcptest"
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
		agentBin, buildErr = mcptest.Build(testTemp, "github.com/agentura/agentura/cmd/composer-agent", false, "CGO_ENABLED=0")
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return agentBin
}

// startComposer runs the agent on a free port and waits until it is ready;
// the process gets SIGTERM when the test ends and must exit with status 0.
func startComposer(t *testing.T) *mcptest.Agent {
	t.Helper()
	a := mcptest.NewAgent(t, composerBinary(t))
	// No HOME: on a scratch image there is none, and nothing may need one.
	a.Cmd.Env = slices.DeleteFunc(a.Cmd.Env, func(kv string) bool {
		return strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_")
	})
	a.Start(t)
	t.Cleanup(func() { a.Stop(t) })
	a.WaitReady(t)
	return a
}

// producedFiles returns the files of a successful result: the flat form for
// one file, "files" for several.
func producedFiles(t *testing.T, res *mcp.CallToolResult) []mcptest.File {
	t.Helper()
	mcptest.MustSucceed(t, "composer tool", res)
	return mcptest.StructuredFiles(t, res)
}

// fetch downloads f into dir under its file name and checks its size.
func fetch(t *testing.T, f mcptest.File, dir string) string {
	t.Helper()
	resp, body := mcptest.Get(t, f.DownloadURL, nil)
	if resp.StatusCode != http.StatusOK || int64(len(body)) != f.SizeBytes {
		t.Fatalf("GET %s: %s, %d bytes; want 200 and %d bytes", f.Filename, resp.Status, len(body), f.SizeBytes)
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
	c, init := mcptest.Connect(t, startComposer(t).URL+"/mcp")
	if init.ServerInfo.Name != "composer-agent" {
		t.Errorf("server name %q, want composer-agent", init.ServerInfo.Name)
	}
	chart := textPNG(t, "CHART", 300, 150, color.RGBA{R: 250, G: 230, B: 200, A: 255})
	b64 := base64.StdEncoding.EncodeToString(chart)
	markdown := "# Sales\n\nПродажи растут.\n\n![Sales chart](chart.png)\n"

	t.Run("Schema", func(t *testing.T) {
		got := map[string]string{}
		for _, tool := range mcptest.ListTools(t, c) {
			raw, _ := json.Marshal(tool.Meta.AdditionalFields["agentura/fileParams"])
			got[tool.Name] = string(raw)
		}
		if got["compose_document"] != `["embeds[].content"]` || got["merge_pdfs"] != `["sources"]` {
			t.Errorf("file parameters = %v, want compose_document [embeds[].content], merge_pdfs [sources]", got)
		}
	})

	t.Run("EmbedsAsObjects", func(t *testing.T) {
		res := mcptest.CallTool(t, c, "compose_document", map[string]any{
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
		res := mcptest.CallTool(t, c, "compose_document", map[string]any{
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
		res := mcptest.CallTool(t, c, "compose_document", map[string]any{
			"markdown": markdown, "format": "pdf",
			"embeds": []any{map[string]any{"name": "chart.png"}},
		})
		txt := mcptest.Text(res)
		t.Logf("error: %s", txt)
		if !res.IsError || !strings.Contains(txt, `"chart.png" was not resolved to a file`) || !strings.Contains(txt, "content is empty") {
			t.Errorf("isError %v, text %q; want the error saying chart.png was not resolved (content is empty)", res.IsError, txt)
		}
	})

	t.Run("MarkdownWithImages", func(t *testing.T) {
		res := mcptest.CallTool(t, c, "compose_document", map[string]any{
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
			res := mcptest.CallTool(t, c, "compose_document", map[string]any{
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
				res := mcptest.CallTool(t, c, tc.tool, tc.args)
				txt := mcptest.Text(res)
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
		res := mcptest.CallTool(t, c, "merge_pdfs", map[string]any{"sources": []any{
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

// TestE2EAttachTool: the shipped agent offers attach_file and its upload
// view (drag-and-drop) by default, and AGENT_ATTACH_TOOL=false leaves them
// out.
func TestE2EAttachTool(t *testing.T) {
	c, _ := mcptest.Connect(t, startComposer(t).URL+"/mcp")
	mcptest.CheckAttachTool(t, c, true)
	off := mcptest.StartAgent(t, composerBinary(t), "AGENT_ATTACH_TOOL=false")
	t.Cleanup(func() { off.Stop(t) })
	c, _ = mcptest.Connect(t, off.URL+"/mcp")
	mcptest.CheckAttachTool(t, c, false)
}
