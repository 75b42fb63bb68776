package ocr_test

// Progress and cancellation of ocr_document against the built agent, with
// the independent client mark3labs/mcp-go (issue 15).

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// pdfPages is a PDF of n pages, each with lines lines of text.
func pdfPages(t *testing.T, n, lines int) []byte {
	pages := make([][]string, n)
	for i := range pages {
		for l := range lines {
			pages[i] = append(pages[i], fmt.Sprintf("Page %d line %d of the quarterly report", i+1, l+1))
		}
	}
	return ocrtest.PDF(t, pages...)
}

// longPDF is the 20-page PDF of longOCR, made once for the tests that use it.
var longPDF struct {
	once sync.Once
	b64  string
}

// longOCR is the arguments of a 20-page OCR that takes many seconds: text
// on every page and a searchable PDF to store at the end.
func longOCR(t *testing.T) map[string]any {
	longPDF.once.Do(func() { longPDF.b64 = b64(pdfPages(t, 20, 12)) })
	if longPDF.b64 == "" {
		t.Fatal("the 20-page PDF could not be made (see the first test that asked for it)")
	}
	return map[string]any{
		"source":  map[string]any{"name": "long.pdf", "content": "data:application/pdf;base64," + longPDF.b64},
		"outputs": []string{"searchable_pdf"},
	}
}

// A 3-page PDF read with a progressToken gives at least one
// notifications/progress per page, for that token, never decreasing.
func TestE2EProgress(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	a := mcptest.StartAgent(t, agentBin)
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	var mu sync.Mutex
	var got []map[string]any
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			got = append(got, n.Params.AdditionalFields)
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{
		Name:      "ocr_document",
		Arguments: map[string]any{"source": map[string]any{"name": "report.pdf", "content": "data:application/pdf;base64," + b64(pdfPages(t, 3, 1))}},
		Meta:      &mcp.Meta{ProgressToken: "ocr-3"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	mcptest.MustSucceed(t, "ocr_document", res)
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 3 {
		t.Fatalf("%d progress notifications for 3 pages, want at least 3: %v", len(got), got)
	}
	last := -1.0
	for _, p := range got {
		v, _ := p["progress"].(float64)
		if p["progressToken"] != "ocr-3" || v < last {
			t.Errorf("notification %v: token or order wrong (previous progress %v)", p, last)
		}
		last = v
	}
	if end := got[len(got)-1]; end["progress"] != end["total"] {
		t.Errorf("last notification %v does not reach the total", end)
	}
	t.Logf("progress: %v", got)
}

// agentChildren lists the command lines of the processes whose parent is
// pid (childProcs): only this agent's, not those of other tests on the
// machine. The OCR tools run in process groups of their own, but remain
// the agent's children.
func agentChildren(t *testing.T, pid int) []string {
	t.Helper()
	return cmdlines(childProcs(t, pid))
}

// running reports whether one of the command lines runs a program of a
// base name in names (and, when with is not empty, has with in its
// arguments).
func running(cmdlines []string, with string, names ...string) bool {
	for _, c := range cmdlines {
		prog, _, _ := strings.Cut(c, " ")
		if slices.Contains(names, filepath.Base(prog)) && strings.Contains(c, with) {
			return true
		}
	}
	return false
}

// waitRecognising waits until the agent's tesseract recognises (runs with
// "-l <languages>"), not merely lists its languages.
func waitRecognising(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !running(agentChildren(t, pid), " -l ", "tesseract") {
		if time.Now().After(deadline) {
			t.Fatalf("tesseract never started on the pages; agent children %v", agentChildren(t, pid))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitNoOCR fails unless the agent's tesseract and pdftoppm are all gone
// within a second of since, and logs how long it took.
func waitNoOCR(t *testing.T, pid int, since time.Time, what string) {
	t.Helper()
	for {
		left := agentChildren(t, pid)
		if !running(left, "", "tesseract", "pdftoppm") {
			break
		}
		if time.Since(since) > time.Second {
			t.Fatalf("a second after %s, the agent still runs %v", what, left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("OCR processes gone %v after %s", time.Since(since).Round(time.Millisecond), what)
}

// waitNothingLeft fails unless, within a few seconds, no output is stored
// under data and no call folder is left.
func waitNothingLeft(t *testing.T, data string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		outputs, calls := filesUnder(filepath.Join(data, "outputs")), callFolders(t, filepath.Join(data, "calls"))
		if len(outputs) == 0 && len(calls) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stored outputs %v, call folders %v", outputs, calls)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// filesUnder lists the regular files below dir.
func filesUnder(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// A 20-page OCR cancelled with notifications/cancelled stops: within a
// second no tesseract or pdftoppm of the agent runs, its call folder is
// gone and nothing is stored.
func TestE2ECancel(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	data := t.TempDir()
	a := mcptest.StartAgent(t, agentBin, "AGENT_DATA_DIR="+data, "AGENT_OCR_TIMEOUT=10m")
	tr, err := transport.NewStreamableHTTP(a.URL+"/mcp", transport.WithHTTPTimeout(mcptest.CallTimeout))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcptest.Protocol))
	mcptest.Initialize(t, c)
	args := longOCR(t)

	// The call goes out on the transport with an id of ours, to cancel it by.
	ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		_, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("ocr-20"), Method: "tools/call",
			Params: mcp.CallToolParams{Name: "ocr_document", Arguments: args}})
		answered <- err
	}()
	pid := a.Cmd.Process.Pid
	waitRecognising(t, pid)
	if err := tr.SendNotification(ctx, mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: "notifications/cancelled", Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": "ocr-20", "reason": "user stopped it"}},
	}}); err != nil {
		t.Fatal(err)
	}
	waitNoOCR(t, pid, time.Now(), "notifications/cancelled")
	waitNothingLeft(t, data)
	cancel()
	<-answered
}

// callFolders lists the per-call folders under <data>/calls/<instance>/.
func callFolders(t *testing.T, dir string) []string {
	var out []string
	instances, _ := os.ReadDir(dir)
	for _, in := range instances {
		if !in.IsDir() {
			continue
		}
		calls, _ := os.ReadDir(filepath.Join(dir, in.Name()))
		for _, c := range calls {
			out = append(out, filepath.Join(in.Name(), c.Name()))
		}
	}
	return out
}

// In stateless mode a dropped HTTP request is the cancellation: the OCR
// processes die, the call folder goes and nothing is stored.
func TestE2ECancelStatelessByDroppedRequest(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	data := t.TempDir()
	a := mcptest.StartAgent(t, agentBin, "AGENT_DATA_DIR="+data, "AGENT_OCR_TIMEOUT=10m", "AGENT_MCP_STATELESS=true")
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	args := longOCR(t)
	ctx, cancel := context.WithCancel(context.Background())
	answered := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "ocr_document", Arguments: args}})
		answered <- err
	}()
	pid := a.Cmd.Process.Pid
	waitRecognising(t, pid)
	cancel() // the client drops the request
	waitNoOCR(t, pid, time.Now(), "the request was dropped")
	<-answered
	waitNothingLeft(t, data)
}

// The long OCR of the cancel tests, left to run, is still running seconds
// after its pages are being read: else the cancel tests could not tell a kill
// from an end. (It is not run to its end, a minute of CPU on a busy machine:
// that a call stores its searchable PDF at the end is TestPDFPagesAndOutputs.)
func TestE2ELongOCRRunsLong(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	a := mcptest.StartAgent(t, agentBin, "AGENT_OCR_TIMEOUT=10m")
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	args := longOCR(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "ocr_document", Arguments: args}})
		answered <- err
	}()
	waitRecognising(t, a.Cmd.Process.Pid)
	select {
	case err := <-answered:
		t.Fatalf("the 20-page OCR ended (%v) within 3 s of its first tesseract; the cancel tests need one that runs for seconds", err)
	case <-time.After(3 * time.Second):
	}
	cancel()
	<-answered
}
