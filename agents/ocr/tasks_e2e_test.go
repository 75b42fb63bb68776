package ocr_test

// MCP tasks on the built OCR agent (issue 28): ocr_document is a long
// tool, so a client that supports tasks gets one for a PDF. A raw
// 2026-07-28 client (the Tasks extension) and mark3labs/mcp-go pinned to
// 2025-11-25 (the core form), in both configurations, each run a task to
// completion; a tasks/cancel stops tesseract within a second and leaves
// nothing stored.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// ocrTask is a 2026-07-28 task with what tasks/get adds.
type ocrTask struct {
	ResultType    string          `json:"resultType"`
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage"`
	Result        json.RawMessage `json:"result"`
}

// tasksClient is a raw 2026-07-28 client declaring the Tasks extension.
func tasksClient(url string) *mcptest.Sessionless {
	c := mcptest.NewSessionless(url + "/mcp")
	c.Extensions = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	return c
}

// waitOCRTask polls tasks/get until the task ends.
func waitOCRTask(t *testing.T, c *mcptest.Sessionless, id string) ocrTask {
	t.Helper()
	deadline := time.Now().Add(mcptest.CallTimeout)
	for {
		tk := mcptest.Call[ocrTask](t, c, "tasks/get", map[string]any{"taskId": id})
		if tk.Status != "working" {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still working after %v: %s", id, mcptest.CallTimeout, tk.StatusMessage)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkOCRResult checks the result of an 8-page OCR with a searchable PDF:
// the text of each page, and the file's digest that of its bytes.
func checkOCRResult(t *testing.T, raw []byte) {
	t.Helper()
	var res struct {
		IsError    bool `json:"isError"`
		Structured struct {
			Text   string `json:"text"`
			URL    string `json:"download_url"`
			SHA256 string `json:"sha256"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError {
		t.Fatalf("result %.500s: %v", raw, err)
	}
	for _, want := range []string{"Page 1 line 1", "Page 3 line 2"} {
		if !strings.Contains(res.Structured.Text, want) {
			t.Errorf("the text lacks %q: %.300s", want, res.Structured.Text)
		}
	}
	resp, err := http.Get(res.Structured.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	sum := sha256.Sum256(body)
	if resp.StatusCode != http.StatusOK || hex.EncodeToString(sum[:]) != res.Structured.SHA256 || !strings.HasPrefix(string(body), "%PDF") {
		t.Errorf("the searchable PDF: HTTP %d, %d bytes, sha256 %x, want %s", resp.StatusCode, len(body), sum, res.Structured.SHA256)
	}
}

func TestE2ETasks(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	// Five pages take seconds even on an idle machine: well past the second
	// within which a call is answered directly (more pages only add minutes
	// on a busy one: the document is read four times here).
	pdf := "data:application/pdf;base64," + b64(pdfPages(t, 5, 12))
	args := map[string]any{"source": map[string]any{"name": "three.pdf", "content": pdf}, "outputs": []string{"searchable_pdf"}}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			a := mcptest.StartAgent(t, agentBin, append([]string{"AGENT_OCR_TIMEOUT=10m", signingKey}, mode.env...)...)

			// 2026-07-28, the Tasks extension.
			c := tasksClient(a.URL)
			tk := mcptest.Call[ocrTask](t, c, "tools/call", map[string]any{"name": "ocr_document", "arguments": args})
			if tk.ResultType != "task" || tk.TaskID == "" {
				t.Fatalf("ocr_document of a 5-page PDF, tasks declared: %+v", tk)
			}
			done := waitOCRTask(t, c, tk.TaskID)
			if done.Status != "completed" {
				t.Fatalf("the task ended %+v", done)
			}
			checkOCRResult(t, done.Result)

			// 2025-11-25, tasks in the core.
			var opts []transport.StreamableHTTPCOption
			mc, init := mcptest.Connect(t, a.URL+"/mcp", opts...)
			if init.Capabilities.Tasks == nil || init.Capabilities.Tasks.Requests == nil {
				t.Fatalf("initialize declares no tasks: %+v", init.Capabilities)
			}
			ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
			defer cancel()
			resp, err := mc.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(rand.Int64()),
				Method: "tools/call", Params: mcp.CallToolParams{Name: "ocr_document", Arguments: args, Task: &mcp.TaskParams{}}})
			if err != nil || resp.Error != nil {
				t.Fatalf("task-augmented tools/call: %v %+v", err, resp)
			}
			var ctr struct {
				Task mcp.Task `json:"task"`
			}
			if err := json.Unmarshal(resp.Result, &ctr); err != nil || ctr.Task.TaskId == "" {
				t.Fatalf("task-augmented tools/call answered %s", resp.Result)
			}
			fin, err := mc.WaitForTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: ctr.Task.TaskId}}, 200*time.Millisecond)
			if err != nil || fin.Status != mcp.TaskStatusCompleted {
				t.Fatalf("WaitForTask: %v %+v", err, fin)
			}
			res, err := mc.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: ctr.Task.TaskId}})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(res)
			checkOCRResult(t, raw)
			noWarnings(t, a)
		})
	}
}

// A tasks/cancel stops the OCR of a running task: within a second no
// tesseract or pdftoppm of the agent runs, nothing is stored, and the task
// is cancelled.
func TestE2ETaskCancel(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	data := t.TempDir()
	a := mcptest.StartAgent(t, agentBin, "AGENT_DATA_DIR="+data, "AGENT_OCR_TIMEOUT=10m", signingKey)
	c := tasksClient(a.URL)
	tk := mcptest.Call[ocrTask](t, c, "tools/call", map[string]any{"name": "ocr_document", "arguments": longOCR(t)})
	if tk.ResultType != "task" {
		t.Fatalf("a 20-page OCR, tasks declared: %+v", tk)
	}
	pid := a.Cmd.Process.Pid
	waitRecognising(t, pid)
	mcptest.Call[map[string]any](t, c, "tasks/cancel", map[string]any{"taskId": tk.TaskID})
	waitNoOCR(t, pid, time.Now(), "tasks/cancel")
	if got := waitOCRTask(t, c, tk.TaskID); got.Status != "cancelled" {
		t.Errorf("after tasks/cancel: %+v", got)
	}
	waitNothingLeft(t, data)
}
