package gateway_test

// End-to-end test of `agentura gateway` as a desktop host meets it: an
// independent MCP client (mark3labs/mcp-go) starts the BUILT binary over
// stdio, fronting the real OCR agent (tesseract) and the real composer, and
// names files only by name or path.

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// The binaries TestMain builds.
var cliBin, ocrBin, composerBin, fileagentBin string

func TestMain(m *testing.M) {
	if os.Getenv(stdioAgentEnv) != "" {
		serveStdioAgent() // this binary as a stdio agent of a test (reconnect_test.go)
		return
	}
	os.Exit(mcptest.Main(m, "gateway-e2e", func(dir string) (err error) {
		race := mcptest.RaceEnabled()
		if cliBin, err = mcptest.Build(dir, "../cmd/agentura", race); err != nil {
			return err
		}
		if ocrBin, err = mcptest.Build(dir, "../cmd/ocr-agent", race); err != nil {
			return err
		}
		if composerBin, err = mcptest.Build(dir, "../cmd/composer-agent", race); err != nil {
			return err
		}
		fileagentBin, err = mcptest.Build(dir, "../examples/fileagent/cmd/fileagent", race)
		return err
	}))
}

// scanPNG draws lines of large monospaced text on white: a scan tesseract
// reads without doubt.
func scanPNG(t *testing.T, lines ...string) []byte {
	t.Helper()
	f, err := opentype.Parse(gomono.TTF)
	if err != nil {
		t.Fatal(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 40, DPI: 72})
	if err != nil {
		t.Fatal(err)
	}
	defer face.Close()
	img := image.NewGray(image.Rect(0, 0, 900, 120+80*len(lines)))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: face}
	for i, l := range lines {
		d.Dot = fixed.P(60, 100+80*i)
		d.DrawString(l)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// notes collects the notifications the gateway sends the host.
type notes struct {
	mu   sync.Mutex
	list []mcp.JSONRPCNotification
}

func (n *notes) add(x mcp.JSONRPCNotification) {
	n.mu.Lock()
	n.list = append(n.list, x)
	n.mu.Unlock()
}

func (n *notes) progress() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, x := range n.list {
		if x.Method == "notifications/progress" {
			msg, _ := x.Params.AdditionalFields["message"].(string)
			out = append(out, msg)
		}
	}
	return out
}

// leaks lists what must never reach a host: bytes, data URIs, the agents'
// URLs (signed or not), tokens and the agents' owner handles.
func leaks(t *testing.T, what string, res *mcp.CallToolResult, agentURLs ...string) {
	t.Helper()
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for _, bad := range append([]string{"data:", "base64", "blob", "token=", "sig=", "expires=", "agentura/owner"}, agentURLs...) {
		if strings.Contains(strings.ToLower(s), strings.ToLower(bad)) {
			t.Errorf("%s: the host received %q: %s", what, bad, s)
		}
	}
	if regexp.MustCompile(`[A-Za-z0-9+/]{200,}`).MatchString(s) {
		t.Errorf("%s: the host received a long base64-like run: %.400s", what, s)
	}
	for _, c := range res.Content {
		switch c.(type) {
		case mcp.TextContent, mcp.ResourceLink:
		default:
			t.Errorf("%s: content block %T reached the host; want text and resource links only", what, c)
		}
	}
}

func callWithProgress(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	req.Params.Meta = &mcp.Meta{ProgressToken: "host-" + name}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func TestGatewayStdio(t *testing.T) {
	for _, c := range []string{"tesseract", "pdftoppm", "pdfinfo"} {
		requiretool.Command(t, c, "apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils (.ci/apt.d/ocr.txt)")
	}
	ocr := mcptest.StartAgent(t, ocrBin)
	// Produced files are never embedded: the gateway downloads them (guarded), with progress.
	composer := mcptest.StartAgent(t, composerBin, "AGENT_EMBED_MAX_BYTES=0")

	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "invoice.png"), scanPNG(t, "INVOICE 4711", "TOTAL 99 EUR"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symlink inside the root that leads out of it.
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "passwd-link")); err != nil {
		t.Fatal(err)
	}

	var stderr bytes.Buffer
	var stderrMu sync.Mutex
	var gatewayCmd *exec.Cmd // adopted by procgroup once started
	tr := transport.NewStdioWithOptions(cliBin, nil,
		// The scan (under 16 KiB) goes inline, the composed PDF through the OCR agent's /uploads.
		[]string{"gateway", "--root", ".", "--out", "agentura-files", "--inline-max", "16KiB", ocr.URL + "/mcp", composer.URL},
		transport.WithCommandFunc(func(_ context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			// Not bound to the start's context, which ends after initialize.
			cmd := exec.Command(command, args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), env...)
			procgroup.Prepare(cmd)
			gatewayCmd = cmd
			return cmd, nil
		}),
		transport.WithCommandStderrWriter(lockedWriter{&stderrMu, &stderr}),
	)
	c := client.NewClient(tr, client.WithProtocolVersion(mcptest.Protocol))
	var got notes
	c.OnNotification(got.add)
	t.Cleanup(func() {
		if t.Failed() {
			stderrMu.Lock()
			t.Logf("gateway stderr:\n%s", stderr.String())
			stderrMu.Unlock()
		}
	})
	// Started and adopted before initialize, so that a gateway that fails
	// to initialize is still killed when the test ends.
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start the gateway: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := procgroup.Adopt(t, gatewayCmd); err != nil {
		t.Fatal(err)
	}
	mcptest.Initialize(t, c) // its Start is a no-op now

	tools := listedTools(t, c, "ocr_document", "ocr_batch", "compose_document", "list_files", "add_file")
	source, _ := json.Marshal(tools["ocr_document"].InputSchema.Properties["source"])
	if !strings.Contains(string(source), `"type":"string"`) || !strings.Contains(string(source), "a file name from this conversation or a path under "+root) || strings.Contains(string(source), "x-file") {
		t.Errorf("ocr_document's source as the host sees it: %s", source)
	}
	agentURLs := []string{ocr.URL, composer.URL, strings.TrimPrefix(ocr.URL, "http://"), strings.TrimPrefix(composer.URL, "http://")}

	t.Run("OCRByName", func(t *testing.T) {
		res := callWithProgress(t, c, "ocr_document", map[string]any{"source": "invoice.png"})
		mcptest.MustSucceed(t, "ocr_document", res)
		if text := mcptest.Text(res); !strings.Contains(text, "4711") {
			t.Errorf("OCR of invoice.png: %q does not read 4711", text)
		}
		leaks(t, "ocr_document", res, agentURLs...)
	})

	var reportPath string
	t.Run("ComposeEmbeddingTheScan", func(t *testing.T) {
		res := callWithProgress(t, c, "compose_document", map[string]any{
			"markdown": "# Report\n\nThe scan:\n\n![the invoice](invoice.png)\n",
			"filename": "report",
			"embeds":   []any{map[string]any{"name": "invoice.png"}},
		})
		mcptest.MustSucceed(t, "compose_document", res)
		text := mcptest.Text(res)
		// Absolute, in a folder of this run under --out, under the name the model knows.
		want := regexp.MustCompile(`Tool produced: report\.pdf \(PDF, [0-9.]+ [KM]B\) — saved as (` +
			regexp.QuoteMeta(filepath.Join(root, "agentura-files")) + `/\d{4}-\d\d-\d\d_\d{6}(-\d+)?/report\.pdf)\n`)
		m := want.FindStringSubmatch(text + "\n")
		if m == nil {
			t.Fatalf("compose text %q lacks %s", text, want)
		}
		reportPath = m[1]
		b, err := os.ReadFile(reportPath)
		if err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Fatalf("report.pdf not saved in --out as a PDF: %v", err)
		}
		var link *mcp.ResourceLink
		for _, ct := range res.Content {
			if l, ok := ct.(mcp.ResourceLink); ok {
				link = &l
			}
		}
		if link == nil {
			t.Fatalf("no resource_link to the saved report: %+v", res.Content)
		}
		if u, err := url.Parse(link.URI); err != nil || u.Scheme != "file" || u.Path != reportPath {
			t.Errorf("resource_link URI %q, want file://%s", link.URI, reportPath)
		}
		leaks(t, "compose_document", res, agentURLs...)
		var transfers bool
		for _, p := range got.progress() {
			transfers = transfers || strings.HasPrefix(p, "downloading report.pdf")
		}
		if !transfers {
			t.Errorf("no progress of the gateway's download of report.pdf; progress seen: %q", got.progress())
		}
	})

	t.Run("OCROfProducedReportByName", func(t *testing.T) {
		res := callWithProgress(t, c, "ocr_document", map[string]any{"source": "report.pdf"})
		mcptest.MustSucceed(t, "ocr_document", res)
		if text := mcptest.Text(res); !strings.Contains(text, "4711") {
			t.Errorf("OCR of report.pdf: %q does not read the embedded scan's 4711", text)
		}
		if !slices.ContainsFunc(got.progress(), func(p string) bool { return strings.HasPrefix(p, "uploading report.pdf") }) {
			t.Errorf("no progress of the upload of report.pdf (over --inline-max); progress seen: %q", got.progress())
		}
		leaks(t, "ocr_document report.pdf", res, agentURLs...)
	})

	t.Run("Refusals", func(t *testing.T) {
		for _, tc := range []struct{ source, want string }{
			{"nope.png", `file "nope.png" not found`},
			{"/etc/passwd", `file "/etc/passwd" refused: it is not under the gateway's roots`},
			{"passwd-link", `file "passwd-link" refused`},
			{"../outside.png", `refused`},
		} {
			res := mcptest.CallTool(t, c, "ocr_document", map[string]any{"source": tc.source})
			text := mcptest.Text(res)
			if !res.IsError || !strings.Contains(text, tc.want) || !strings.Contains(text, "invoice.png") || !strings.Contains(text, "Nothing was sent") {
				t.Errorf("%s: is_error %v, text %q; want a tool error with %q listing invoice.png", tc.source, res.IsError, text, tc.want)
			}
			if strings.Contains(text, "root:x:0") {
				t.Errorf("%s: the host got /etc/passwd's content", tc.source)
			}
			leaks(t, tc.source, res, agentURLs...)
		}
	})

	t.Run("ListAndAddFile", func(t *testing.T) {
		res := mcptest.CallTool(t, c, "add_file", map[string]any{"path": filepath.Join(root, "invoice.png"), "name": "scan.png"})
		mcptest.MustSucceed(t, "add_file", res)
		res = mcptest.CallTool(t, c, "list_files", map[string]any{})
		text := mcptest.Text(res)
		for _, want := range []string{"invoice.png (PNG", "scan.png (PNG", "report.pdf (PDF", "saved as " + reportPath} {
			if !strings.Contains(text, want) {
				t.Errorf("list_files %q lacks %q", text, want)
			}
		}
		res = mcptest.CallTool(t, c, "add_file", map[string]any{"path": "/etc/passwd"})
		if !res.IsError || !strings.Contains(mcptest.Text(res), "refused") {
			t.Errorf("add_file /etc/passwd: %v %q, want a refusal", res.IsError, mcptest.Text(res))
		}
	})

	t.Run("NothingOverwritten", func(t *testing.T) {
		res := mcptest.CallTool(t, c, "compose_document", map[string]any{"markdown": "# Again\n", "filename": "report"})
		mcptest.MustSucceed(t, "compose_document", res)
		if text := mcptest.Text(res); !strings.Contains(text, "saved as "+filepath.Join(filepath.Dir(reportPath), "report (2).pdf")) {
			t.Errorf("second report: %q, want it saved as report (2).pdf", text)
		}
	})
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// listedTools lists the host's tools by name, failing the test when one of
// want is not among them.
func listedTools(t *testing.T, c *client.Client, want ...string) map[string]mcp.Tool {
	t.Helper()
	tools := map[string]mcp.Tool{}
	for _, tool := range mcptest.ListTools(t, c) {
		tools[tool.Name] = tool
	}
	for _, w := range want {
		if _, ok := tools[w]; !ok {
			t.Fatalf("tool %s not listed; got %v", w, keys(tools))
		}
	}
	return tools
}

func keys(m map[string]mcp.Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
