package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/gateway"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/testagent"
)

// Tasks through the gateway: the agent makes a task of a long call; a host
// that does not support tasks gets the result as ever, with the task's
// progress on its token and the file saved in Out; a host that declares
// the Tasks extension gets the task passed through, follows it with
// tasks/get and gets the finished result (the file saved, no signed URL);
// tasks/* without the declaration is -32021.
func TestTasksThroughTheGateway(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g, err := gateway.New(ctx, gateway.Config{Agents: []gateway.Agent{{URL: a.Endpoint}}, Roots: []string{t.TempDir()}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()

	var mu sync.Mutex
	var progress []string
	host := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := host.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "long_sleep", Arguments: map[string]any{"millis": 2500}}
	params.SetProgressToken("host-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("long_sleep through the gateway: %v %+v", err, res)
	}
	m := savedAs.FindStringSubmatch(resultText(res))
	if m == nil || m[1] != "slept.txt" || !strings.HasPrefix(m[2], out+string(filepath.Separator)) {
		t.Fatalf("the task's file, saved in a folder of Out: %q", resultText(res))
	}
	if b, err := os.ReadFile(m[2]); err != nil || string(b) != "slept 2500 ms\n" {
		t.Errorf("the task's file in Out: %q %v", b, err)
	}
	mu.Lock()
	if !strings.Contains(strings.Join(progress, "\n"), "s slept") {
		t.Errorf("the host's progress: %q, want the task's", progress)
	}
	mu.Unlock()

	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.Server() }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer srv.Close()
	tc := mcptest.NewSessionless(srv.URL)
	tc.Extensions = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	type task struct {
		ResultType string          `json:"resultType"`
		TaskID     string          `json:"taskId"`
		Status     string          `json:"status"`
		Result     json.RawMessage `json:"result"`
	}
	tk := mcptest.Call[task](t, tc, "tools/call", map[string]any{"name": "long_sleep", "arguments": map[string]any{"millis": 3000}})
	if tk.ResultType != "task" || !strings.HasPrefix(tk.TaskID, "0.") || tk.Status != "working" {
		t.Fatalf("a host with tasks: %+v", tk)
	}
	for deadline := time.Now().Add(time.Minute); tk.Status != "completed"; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the passed task: %+v", tk)
		}
		tk = mcptest.Call[task](t, tc, "tasks/get", map[string]any{"taskId": tk.TaskID})
	}
	if !strings.Contains(string(tk.Result), "saved as") || strings.Contains(string(tk.Result), "token=") {
		t.Errorf("the passed task's result: %s", tk.Result)
	}
	again := mcptest.Call[task](t, tc, "tasks/get", map[string]any{"taskId": tk.TaskID})
	if string(again.Result) != string(tk.Result) {
		t.Errorf("a second read of the ended task: %s", again.Result)
	}
	plain := mcptest.NewSessionless(srv.URL)
	if ans, err := plain.Send(ctx, "tasks/get", map[string]any{"taskId": tk.TaskID}, nil); err != nil || ans.Response.Error == nil || ans.Response.Error.Code != -32021 {
		t.Errorf("tasks/get without the extension: %v %+v", err, ans)
	}
}
