package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/internal/testkit/testagent"
)

// taskSession connects a Config.Tasks middleware to a, the transport's
// HTTP client from client.WithTasks (unless plain); seen gets each task
// state the middleware tells.
func taskSession(t *testing.T, a *testagent.Agent, plain bool) (*mcp.ClientSession, *client.Middleware, *client.Registry, func() []string) {
	t.Helper()
	reg, err := client.NewRegistry("", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	var mu sync.Mutex
	var seen []string
	mw, err := client.New(client.Config{Registry: reg, BaseURL: a.Base, Tasks: true, Task: func(tk *client.Task) {
		mu.Lock()
		seen = append(seen, tk.Status+": "+tk.StatusMessage)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "task-host", Version: "0"}, nil)
	mw.Attach(c)
	tr := &mcp.StreamableClientTransport{Endpoint: a.Endpoint, DisableStandaloneSSE: true}
	if !plain {
		tr.HTTPClient = client.WithTasks(nil)
	}
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, mw, reg, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// The middleware with tasks: CallTool of a long tool waits for the task the
// agent makes, telling its progress, and returns its result with the file
// fetched (its digest checked); StartTool returns the task, which a host
// that restarted (another session, another registry) follows to its end;
// a wait given up leaves the task running (TaskRunningError); a cancelled
// task says so; a transport without WithTasks is an error that says what
// to do, not an empty result.
func TestTasksThroughTheMiddleware(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	cs, _, reg, seen := taskSession(t, a, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "long_sleep", Arguments: map[string]any{"millis": 2500}})
	if err != nil || res.IsError {
		t.Fatalf("CallTool of a long tool: %v %+v", err, res)
	}
	e, err := reg.Lookup("slept.txt")
	if err != nil {
		t.Fatalf("the task's file is not in the registry: %v", err)
	}
	body, _ := os.ReadFile(e.Path)
	sum := sha256.Sum256(body)
	if string(body) != "slept 2500 ms\n" || e.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("the task's file: %q, sha256 %s", body, e.SHA256)
	}
	if s := seen(); len(s) < 2 || !strings.HasPrefix(s[0], "working") || !strings.HasPrefix(s[len(s)-1], "completed") {
		t.Errorf("the states told: %v", s)
	}

	// Started here, followed after a "restart".
	_, mw, _, _ := taskSession(t, a, false)
	_, task, err := mw.StartTool(ctx, cs, &mcp.CallToolParams{Name: "long_sleep", Arguments: map[string]any{"millis": 2500}})
	if err != nil || task == nil || task.ID == "" || task.Status != client.TaskWorking {
		t.Fatalf("StartTool: %v %+v", err, task)
	}
	short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = mw.WaitTask(short, cs, task.ID)
	stop()
	var running *client.TaskRunningError
	if !errors.As(err, &running) || !errors.Is(err, client.ErrTaskRunning) || running.Task.ID != task.ID {
		t.Fatalf("a wait given up: %v", err)
	}
	cs2, mw2, reg2, _ := taskSession(t, a, false)
	res, err = mw2.WaitTask(ctx, cs2, task.ID)
	if err != nil || res.IsError {
		t.Fatalf("WaitTask after a restart: %v %+v", err, res)
	}
	if _, err := reg2.Lookup("slept.txt"); err != nil {
		t.Errorf("the resumed task's file: %v", err)
	}

	_, task, err = mw.StartTool(ctx, cs, &mcp.CallToolParams{Name: "long_sleep", Arguments: map[string]any{"millis": 60000}})
	if err != nil || task == nil {
		t.Fatalf("StartTool: %v %+v", err, task)
	}
	if err := mw.CancelTask(ctx, cs, task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := mw.WaitTask(ctx, cs, task.ID); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("WaitTask of a cancelled task: %v", err)
	}

	plain, _, _, _ := taskSession(t, a, true)
	if _, err := plain.CallTool(ctx, &mcp.CallToolParams{Name: "long_sleep", Arguments: map[string]any{"millis": 2500}}); err == nil || !strings.Contains(err.Error(), "WithTasks") {
		t.Errorf("tasks over a transport without WithTasks: %v", err)
	}
}
