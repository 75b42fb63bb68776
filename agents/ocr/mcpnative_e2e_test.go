package ocr_test

// Progress and cancellation of ocr_document against the built agent, with
// the independent client mark3labs/mcp-go (issue 15).

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/mcptest"
)

// pdfPages is a PDF of n pages, each with a line naming it.
func pdfPages(t *testing.T, n int) []byte {
	pages := make([][]string, n)
	for i := range pages {
		pages[i] = []string{fmt.Sprintf("Page %d of the report", i+1)}
	}
	return ocrtest.PDF(t, pages...)
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
		Arguments: map[string]any{"source": map[string]any{"name": "report.pdf", "content": "data:application/pdf;base64," + b64(pdfPages(t, 3))}},
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

// agentChildren lists the commands (comm) of the processes whose parent is
// pid, from /proc: only this agent's, not those of other tests on the
// machine. The OCR tools run in process groups of their own, but remain
// the agent's children.
func agentChildren(t *testing.T, pid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to check processes: %v", err)
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, s[open+1:end])
		}
	}
	return out
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
	pdf := pdfPages(t, 20)

	// The call goes out on the transport with an id of ours, to cancel it by.
	ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		_, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("ocr-20"), Method: "tools/call",
			Params: mcp.CallToolParams{Name: "ocr_document", Arguments: map[string]any{"source": map[string]any{"name": "long.pdf", "content": "data:application/pdf;base64," + b64(pdf)}}}})
		answered <- err
	}()
	pid := a.Cmd.Process.Pid
	deadline := time.Now().Add(time.Minute)
	for !slicesContain(agentChildren(t, pid), "tesseract") {
		if time.Now().After(deadline) {
			t.Fatalf("tesseract never started; agent children %v", agentChildren(t, pid))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := tr.SendNotification(ctx, mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: "notifications/cancelled", Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": "ocr-20", "reason": "user stopped it"}},
	}}); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	for {
		left := agentChildren(t, pid)
		if !slicesContain(left, "tesseract") && !slicesContain(left, "pdftoppm") {
			break
		}
		if time.Since(sent) > time.Second {
			t.Fatalf("a second after the cancel, the agent still runs %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("OCR processes gone %v after notifications/cancelled", time.Since(sent).Round(time.Millisecond))
	// The call's folder goes when the tool returns, just after its process.
	deadline = time.Now().Add(5 * time.Second)
	for {
		outputs, calls := filesUnder(filepath.Join(data, "outputs")), callFolders(t, filepath.Join(data, "calls"))
		if len(outputs) == 0 && len(calls) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the cancel: stored outputs %v, call folders %v", outputs, calls)
		}
		time.Sleep(50 * time.Millisecond)
	}
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

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
