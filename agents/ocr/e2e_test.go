package ocr_test

// End-to-end test of ocr-agent: the real binary (cmd/ocr-agent) on a real port, driven by an
// independent MCP client (mark3labs/mcp-go) over streamable HTTP; produced
// files are downloaded over plain HTTP and read back (pdftotext).

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
)

// pinnedProtocol: mcp-go v1.2.1 prefers 2026-07-28, which a stateful go-sdk
// server does not speak (DESIGN.md §4).
const pinnedProtocol = mcp.ProtocolVersion20251125

const (
	readyTimeout = 20 * time.Second
	exitTimeout  = 20 * time.Second
	callTimeout  = 120 * time.Second // OCR under -race on a busy 2-core machine
)

// agentBin is the ocr-agent binary built by TestMain.
var agentBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ocr-agent-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	agentBin = filepath.Join(dir, "ocr-agent")
	args := []string{"build", "-o", agentBin}
	if raceEnabled() {
		args = append(args, "-race") // a data race in the agent then fails its exit status
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	build := exec.Command(goCmd, append(args, "../../cmd/ocr-agent")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: build ocr-agent: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// agent is a running ocr-agent process.
type agent struct {
	base   string
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan struct{}
	err    error
}

// startAgent starts ocr-agent on a free loopback port with a fresh data
// folder; env adds or overrides variables.
func startAgent(t *testing.T, env ...string) *agent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	a := &agent{base: "http://" + addr, logs: &syncBuffer{}, exited: make(chan struct{})}
	a.cmd = exec.Command(agentBin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENT_") {
			a.cmd.Env = append(a.cmd.Env, kv)
		}
	}
	a.cmd.Env = append(a.cmd.Env, "AGENT_ADDR="+addr, "AGENT_PUBLIC_URL="+a.base,
		"AGENT_DATA_DIR="+t.TempDir(), "AGENT_SHUTDOWN_TIMEOUT=10s")
	a.cmd.Env = append(a.cmd.Env, env...)
	a.cmd.Stdout, a.cmd.Stderr = a.logs, a.logs
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", agentBin, err)
	}
	go func() { a.err = a.cmd.Wait(); close(a.exited) }()
	t.Cleanup(func() {
		select {
		case <-a.exited:
		default:
			_ = a.cmd.Process.Kill()
			<-a.exited
		}
		if t.Failed() {
			t.Logf("agent log:\n%s", a.logs.String())
		}
	})
	return a
}

// waitFor polls path until it answers want, and returns the last body.
func (a *agent) waitFor(t *testing.T, path string, want int) string {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case <-a.exited:
			t.Fatalf("agent exited (%v) before %s answered %d", a.err, path, want)
		default:
		}
		resp, err := http.Get(a.base + path)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == want {
				return string(body)
			}
			last = fmt.Sprintf("%s %s", resp.Status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not answer %d within %v (last: %s)", path, want, readyTimeout, last)
	return ""
}

// stop sends SIGTERM and expects a clean exit.
func (a *agent) stop(t *testing.T) {
	t.Helper()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.exited:
		if a.err != nil {
			t.Errorf("agent exited with %v after SIGTERM, want status 0", a.err)
		}
	case <-time.After(exitTimeout):
		t.Errorf("agent did not exit within %v of SIGTERM", exitTimeout)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// connect opens an mcp-go streamable HTTP session with a, pinned.
func connect(t *testing.T, a *agent) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(a.base+"/mcp", transport.WithHTTPTimeout(callTimeout))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(pinnedProtocol))
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start MCP client: %v", err)
	}
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = pinnedProtocol
	req.Params.ClientInfo = mcp.Implementation{Name: "ocr-e2e", Version: "1.0.0"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ServerInfo.Name != "ocr-agent" || res.ProtocolVersion != pinnedProtocol {
		t.Errorf("server %q, protocol %q; want ocr-agent, %s", res.ServerInfo.Name, res.ProtocolVersion, pinnedProtocol)
	}
	return c
}

// call calls tool; a protocol error fails the test.
func call(t *testing.T, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
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

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func mustSucceed(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
}

func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	raw := res.RawStructuredContent
	if raw == nil {
		raw, _ = json.Marshal(res.StructuredContent)
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode structured content %s: %v", raw, err)
	}
	return v
}

// documentOutput is ocr_document's structured content, as the contract
// (DESIGN.md §3) describes it.
type documentOutput struct {
	Source    string   `json:"source"`
	PageCount int      `json:"page_count"`
	Text      string   `json:"text"`
	Languages []string `json:"languages"`
	Pages     []struct {
		Page int    `json:"page"`
		Text string `json:"text"`
	} `json:"pages"`
	Files []struct {
		DownloadURL string `json:"download_url"`
		Filename    string `json:"filename"`
		MIMEType    string `json:"mime_type"`
		SizeBytes   int64  `json:"size_bytes"`
	} `json:"files"`
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestHTTP drives the agent as an MCP host would.
func TestE2EHTTP(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo", "pdftotext")
	a := startAgent(t)
	a.waitFor(t, "/readyz", http.StatusOK)
	c := connect(t, a)

	img := ocrtest.Render(t, sampleLines...)
	words := sampleWords

	t.Run("ListTools", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		props := map[string]map[string]any{}
		for _, tool := range res.Tools {
			raw, _ := json.Marshal(tool.InputSchema)
			var s struct {
				Properties map[string]any `json:"properties"`
			}
			json.Unmarshal(raw, &s)
			props[tool.Name] = s.Properties
		}
		source, _ := props["ocr_document"]["source"].(map[string]any)
		sources, _ := props["ocr_batch"]["sources"].(map[string]any)
		if source["x-file"] != true || sources["x-file"] != true || sources["type"] != "array" {
			t.Errorf("file parameters not marked x-file: source %v, sources %v", source, sources)
		}
		outputs, _ := json.Marshal(props["ocr_document"]["outputs"])
		if !strings.Contains(string(outputs), `"searchable_pdf","hocr","tsv"`) {
			t.Errorf("outputs schema %s does not list searchable_pdf, hocr, tsv", outputs)
		}
	})

	t.Run("ObjectBase64WithOutputs", func(t *testing.T) {
		res := call(t, c, "ocr_document", map[string]any{
			"source":  map[string]any{"name": "scan.png", "content": b64(ocrtest.PNG(t, img))},
			"outputs": []string{"searchable_pdf", "hocr"},
		})
		mustSucceed(t, res)
		wantWords(t, "text content", text(res), words...)
		out := structured[documentOutput](t, res)
		if out.Source != "scan.png" || out.PageCount != 1 || len(out.Pages) != 1 || out.Pages[0].Page != 1 {
			t.Errorf("structured = %+v; want scan.png, one page numbered 1", out)
		}
		if len(out.Files) != 2 || out.Files[0].Filename != "scan.ocr.pdf" || out.Files[1].Filename != "scan.hocr" {
			t.Fatalf("files %+v; want scan.ocr.pdf and scan.hocr", out.Files)
		}
		if !strings.Contains(text(res), "Tool produced: scan.ocr.pdf (PDF") {
			t.Errorf("no \"Tool produced\" line for the PDF in %q", text(res))
		}
		pdf := download(t, out.Files[0].DownloadURL)
		if int64(len(pdf)) != out.Files[0].SizeBytes {
			t.Errorf("downloaded %d bytes, size_bytes says %d", len(pdf), out.Files[0].SizeBytes)
		}
		wantWords(t, "searchable PDF text layer", ocrtest.PDFText(t, pdf), words...)
		wantWords(t, "hOCR", string(download(t, out.Files[1].DownloadURL)), "ocr_page", "quick", "dog")
	})

	t.Run("PlainStringDataURI", func(t *testing.T) {
		res := call(t, c, "ocr_document", map[string]any{
			"source": "data:image/jpeg;name=photo.jpg;base64," + b64(ocrtest.JPEG(t, img)),
		})
		mustSucceed(t, res)
		if out := structured[documentOutput](t, res); out.Source != "photo.jpg" {
			t.Errorf("source = %q, want photo.jpg (from the data URI's name)", out.Source)
		}
		wantWords(t, "text content", text(res), words...)
	})

	t.Run("ObjectDataURIPDF", func(t *testing.T) {
		pdf := ocrtest.PDF(t, []string{"First page alpha"}, []string{"Second page bravo"})
		res := call(t, c, "ocr_document", map[string]any{
			"source":  map[string]any{"name": "letter.pdf", "content": "data:application/pdf;base64," + b64(pdf)},
			"outputs": []string{"searchable_pdf"},
		})
		mustSucceed(t, res)
		out := structured[documentOutput](t, res)
		if len(out.Pages) != 2 {
			t.Fatalf("%d pages, want 2", len(out.Pages))
		}
		wantWords(t, "page 1", out.Pages[0].Text, "first", "alpha")
		wantWords(t, "page 2", out.Pages[1].Text, "second", "bravo")
		// One file: flat in the structured content.
		flat := structured[struct {
			DownloadURL string `json:"download_url"`
			Filename    string `json:"filename"`
			SizeBytes   int64  `json:"size_bytes"`
		}](t, res)
		if flat.Filename != "letter.ocr.pdf" || flat.SizeBytes <= 0 || flat.DownloadURL == "" {
			t.Fatalf("structured file %+v, want letter.ocr.pdf with its size and URL", flat)
		}
		layer := strings.Split(strings.TrimRight(ocrtest.PDFText(t, download(t, flat.DownloadURL)), "\f\n"), "\f")
		if len(layer) != 2 {
			t.Fatalf("searchable PDF has %d pages of text, want 2", len(layer))
		}
		wantWords(t, "text layer page 1", layer[0], "alpha")
		wantWords(t, "text layer page 2", layer[1], "bravo")
	})

	t.Run("Batch", func(t *testing.T) {
		res := call(t, c, "ocr_batch", map[string]any{"sources": []any{
			map[string]any{"name": "fax.tiff", "content": b64(ocrtest.TIFF(t, img))},
			"data:text/plain;name=notes.txt;base64," + b64([]byte("just some notes")), // the plain-string form in an array
		}})
		mustSucceed(t, res)
		out := structured[struct {
			Succeeded int `json:"succeeded"`
			Failed    int `json:"failed"`
			Results   []struct {
				Source string `json:"source"`
				Text   string `json:"text"`
				Error  string `json:"error"`
			} `json:"results"`
		}](t, res)
		if out.Succeeded != 1 || out.Failed != 1 || len(out.Results) != 2 {
			t.Fatalf("batch = %+v; want one success, one failure", out)
		}
		wantWords(t, "fax.tiff", out.Results[0].Text, words...)
		if !strings.Contains(out.Results[1].Error, "notes.txt") || !strings.Contains(out.Results[1].Error, "not an image or a PDF") {
			t.Errorf("notes.txt error %q; want it named and explained", out.Results[1].Error)
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		res := call(t, c, "ocr_document", map[string]any{
			"source": map[string]any{"name": "scan.png", "content": b64(ocrtest.PNG(t, img))}, "languages": []string{"klingon"},
		})
		if !res.IsError || !strings.Contains(text(res), `"klingon" is not installed`) || !strings.Contains(text(res), "installed: eng") {
			t.Errorf("isError %v, %q; want a tool error listing the installed languages", res.IsError, text(res))
		}
	})

	if err := c.Close(); err != nil {
		t.Errorf("close client: %v", err)
	}
	a.stop(t)
}

// TestReadyzWithoutEngine starts the agent where neither tesseract nor
// pdftoppm can be found: it serves, but /readyz says what to install.
func TestE2EReadyzWithoutEngine(t *testing.T) {
	a := startAgent(t, "PATH="+t.TempDir())
	a.waitFor(t, "/healthz", http.StatusOK)
	body := a.waitFor(t, "/readyz", http.StatusServiceUnavailable)
	for _, w := range []string{"tesseract", "tesseract-ocr", "pdftoppm", "poppler-utils"} {
		if !strings.Contains(body, w) {
			t.Errorf("/readyz body %s does not say %q", body, w)
		}
	}
	a.stop(t)
}
