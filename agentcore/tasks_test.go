package agentcore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/s3test"
)

// longTool is a Long tool of a test replica: it reports progress, then
// waits until released (producing a file) or canceled.
type longTool struct {
	mu      sync.Mutex
	release chan struct{}
	started chan string  // the replica that started
	stopped chan error   // how it ended
	running atomic.Int32 // calls running now
	payload []byte       // the file it produces
}

func newLongTool() *longTool {
	return &longTool{release: make(chan struct{}), started: make(chan string, 16), stopped: make(chan error, 16),
		payload: []byte(strings.Repeat("the result of a long call\n", 100))}
}

// released is the channel closed to release the calls.
func (l *longTool) released() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.release
}

// releaseAll releases the calls running and makes later ones wait again.
func (l *longTool) releaseAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.release)
	l.release = make(chan struct{})
}

// add registers the tool, called "long", on svc, a replica called name,
// and a quick Long tool "short" that ends at once.
func (l *longTool) add(svc *Service, name string) {
	AddTool(svc, Tool{Name: "long", Long: true}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		l.running.Add(1)
		defer l.running.Add(-1)
		release := l.released()
		l.started <- name
		call.Progress(1, 3, "page 1 of 3 read on "+name)
		select {
		case <-ctx.Done():
			l.stopped <- ctx.Err()
			return nil, ctx.Err()
		case <-release:
		}
		l.stopped <- nil
		return call.FileResponse(ctx, OutputBytes("result.txt", l.payload))
	})
	AddTool(svc, Tool{Name: "short", Long: true}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		return TextResult("short and done on " + name), nil
	})
}

// taskReplicas starts n replicas on one store, each with the tools of l.
func taskReplicas(t *testing.T, n int, edit func(*Config)) ([]*Service, []string, *longTool) {
	l := newLongTool()
	var svcs []*Service
	var urls []string
	for i := range n {
		name := string(rune('a' + i))
		svc, srv := serveTestService(t, edit)
		l.add(svc, name)
		svcs, urls = append(svcs, svc), append(urls, srv.URL)
	}
	return svcs, urls, l
}

// tasksClient is a raw 2026-07-28 client declaring the Tasks extension.
func tasksClient(url string) *mcptest.Sessionless {
	c := mcptest.NewSessionless(url + "/mcp")
	c.Extensions = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	return c
}

// wireTask is a Task as the 2026-07-28 extension writes it, with what
// tasks/get adds.
type wireTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
	Error          *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Meta map[string]any `json:"_meta"`
}

// send sends method and returns the answer, failing on an HTTP error.
func send(t *testing.T, c *mcptest.Sessionless, method string, params map[string]any) *mcptest.Answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
	defer cancel()
	ans, err := c.Send(ctx, method, params, nil)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return ans
}

// getTask is tasks/get, decoded.
func getTask(t *testing.T, c *mcptest.Sessionless, id string) wireTask {
	t.Helper()
	return mcptest.Call[wireTask](t, c, "tasks/get", map[string]any{"taskId": id})
}

// waitTask polls tasks/get until the task's status is one of want.
func waitTask(t *testing.T, c *mcptest.Sessionless, id string, want ...string) wireTask {
	t.Helper()
	deadline := time.Now().Add(mcptest.CallTimeout)
	for {
		task := getTask(t, c, id)
		for _, w := range want {
			if task.Status == w {
				return task
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s (%s) after %v, want %v", id, task.Status, task.StatusMessage, mcptest.CallTimeout, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startTask calls the long tool and returns the task it is answered with.
func startTask(t *testing.T, c *mcptest.Sessionless) wireTask {
	t.Helper()
	task := mcptest.Call[wireTask](t, c, "tools/call", map[string]any{"name": "long", "arguments": map[string]any{}})
	if task.ResultType != "task" || task.TaskID == "" || task.Status != "working" || task.TTLMs == nil || task.PollIntervalMs <= 0 || task.CreatedAt == "" {
		t.Fatalf("tools/call of a long tool answered %+v, want a working task", task)
	}
	return task
}

// fileOf reads the one produced file of a CallToolResult: its URL, name
// and digest, and the bytes downloaded from the URL.
func fileOf(t *testing.T, raw json.RawMessage) (name, digest string, body []byte) {
	t.Helper()
	var res struct {
		IsError    bool `json:"isError"`
		Structured struct {
			URL      string `json:"download_url"`
			Filename string `json:"filename"`
			SHA256   string `json:"sha256"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError || res.Structured.URL == "" {
		t.Fatalf("result %s: %v", raw, err)
	}
	resp, err := http.Get(res.Structured.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", res.Structured.URL, resp.StatusCode, body)
	}
	return res.Structured.Filename, res.Structured.SHA256, body
}

// The Tasks extension of 2026-07-28 on one agent: a client declaring it
// gets a task for a long call, follows its progress with tasks/get, and
// reads the result (its file's URL signed afresh, its digest that of the
// bytes); a quick call of a long tool is answered with its result; a
// client not declaring it gets today's answer; tasks/* without the
// declaration is -32021; another owner's task, or an unknown one, is
// not found (-32602).
func TestTasksExtension(t *testing.T) {
	svcs, urls, long := taskReplicas(t, 1, nil)
	c := tasksClient(urls[0])

	disc := mcptest.Call[struct {
		Capabilities struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"capabilities"`
	}](t, c, "server/discover", nil)
	if _, ok := disc.Capabilities.Extensions["io.modelcontextprotocol/tasks"]; !ok {
		t.Fatalf("server/discover declares %v, want the Tasks extension", disc.Capabilities.Extensions)
	}

	task := startTask(t, c)
	<-long.started
	got := waitTask(t, c, task.TaskID, "working")
	if got.ResultType != "complete" || got.LastUpdatedAt == "" {
		t.Errorf("tasks/get of a running task: %+v", got)
	}
	// Progress reaches the record within a second or so.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(got.StatusMessage, "page 1 of 3") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		got = getTask(t, c, task.TaskID)
	}
	if !strings.Contains(got.StatusMessage, "page 1 of 3") || got.Meta["agentura/progress"] == nil {
		t.Errorf("a running task's progress: %q, %v", got.StatusMessage, got.Meta)
	}

	long.releaseAll()
	done := waitTask(t, c, task.TaskID, "completed")
	name, digest, body := fileOf(t, done.Result)
	sum := sha256.Sum256(body)
	if name != "result.txt" || digest != hex.EncodeToString(sum[:]) || string(body) != string(long.payload) {
		t.Errorf("the task's file: %s, sha256 %s, %d bytes", name, digest, len(body))
	}
	if done.PollIntervalMs != 0 {
		t.Errorf("an ended task asks to be polled every %d ms", done.PollIntervalMs)
	}

	// A call that ends within the grace is answered with its result.
	quick := send(t, c, "tools/call", map[string]any{"name": "short", "arguments": map[string]any{}})
	if !strings.Contains(string(quick.Response.Result), "short and done") || strings.Contains(string(quick.Response.Result), `"task"`) {
		t.Errorf("a quick call of a long tool: %s", quick.Response.Result)
	}

	// Without the extension: the call runs as ever, to its end.
	plain := mcptest.NewSessionless(urls[0] + "/mcp")
	go func() { <-long.started; long.releaseAll() }()
	res := send(t, plain, "tools/call", map[string]any{"name": "long", "arguments": map[string]any{}})
	if res.Response.Error != nil || strings.Contains(string(res.Response.Result), `"resultType":"task"`) {
		t.Errorf("a call without the extension: %s %v", res.Response.Result, res.Response.Error)
	}
	ans := send(t, plain, "tasks/get", map[string]any{"taskId": task.TaskID})
	if ans.Response.Error == nil || ans.Response.Error.Code != -32021 || !strings.Contains(string(ans.Response.Error.Data), "io.modelcontextprotocol/tasks") {
		t.Errorf("tasks/get without the extension: %+v", ans.Response.Error)
	}
	for _, id := range []string{"NOSUCHTASK", task.TaskID + "X"} {
		ans := send(t, c, "tasks/get", map[string]any{"taskId": id})
		if ans.Response.Error == nil || ans.Response.Error.Code != -32602 || !strings.Contains(ans.Response.Error.Message, "not found") {
			t.Errorf("tasks/get of %s: %+v", id, ans.Response.Error)
		}
	}
	if ans := send(t, c, "tasks/result", map[string]any{"taskId": task.TaskID}); ans.Response.Error == nil || ans.Response.Error.Code != -32601 {
		t.Errorf("tasks/result on 2026-07-28: %+v", ans.Response.Error)
	}
	_ = svcs
}

// A task made on one replica is read and canceled on another: the work on
// the first stops within a second (the cancel marker is polled), no output
// stays stored, and every replica reports it cancelled.
func testTasksAcrossReplicas(t *testing.T, edit func(*Config)) {
	svcs, urls, long := taskReplicas(t, 2, edit)
	a, b := tasksClient(urls[0]), tasksClient(urls[1])
	task := startTask(t, a)
	if on := <-long.started; on != "a" {
		t.Fatalf("the task runs on %s", on)
	}
	if got := getTask(t, b, task.TaskID); got.Status != "working" {
		t.Fatalf("tasks/get on the other replica: %+v", got)
	}
	start := time.Now()
	if ans := send(t, b, "tasks/cancel", map[string]any{"taskId": task.TaskID}); ans.Response.Error != nil || !strings.Contains(string(ans.Response.Result), `"resultType":"complete"`) {
		t.Fatalf("tasks/cancel: %s %+v", ans.Response.Result, ans.Response.Error)
	}
	select {
	case err := <-long.stopped:
		if err == nil {
			t.Fatal("the tool finished instead of stopping")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the tool did not stop after a cancel on another replica")
	}
	took := time.Since(start)
	t.Logf("a cancel on replica b stopped the work on a in %v", took)
	if took > time.Second {
		t.Errorf("the work stopped %v after the cancel, want within a second", took)
	}
	for _, c := range []*mcptest.Sessionless{a, b} {
		if got := waitTask(t, c, task.TaskID, "cancelled", "failed", "completed"); got.Status != "cancelled" {
			t.Errorf("after the cancel: %+v", got)
		}
	}
	for _, svc := range svcs {
		if n := countOutputs(t, svc); n != 0 {
			t.Errorf("%d outputs stored after the cancel", n)
		}
	}

	// A completed task is read, its file downloaded, on a replica started
	// after it ended (a restart).
	done := startTask(t, a)
	<-long.started
	long.releaseAll()
	waitTask(t, a, done.TaskID, "completed")
	_, later := serveTestService(t, edit)
	got := getTask(t, tasksClient(later.URL), done.TaskID)
	if name, _, body := fileOf(t, got.Result); got.Status != "completed" || name != "result.txt" || string(body) != string(long.payload) {
		t.Errorf("a completed task on a replica started later: %+v", got)
	}
}

func TestTasksAcrossReplicasOnDisk(t *testing.T) {
	dir := t.TempDir()
	testTasksAcrossReplicas(t, func(c *Config) { c.DataDir = dir })
}

func TestTasksAcrossReplicasOnS3(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	testTasksAcrossReplicas(t, func(c *Config) {
		c.StorageURL = srv.StorageURL(bucket)
		c.StorageEnv = srv.Env()
		c.SigningKeys = []string{"0123456789abcdef0123456789abcdef0123456789abcdef"}
	})
}

// countOutputs counts the outputs in svc's store.
func countOutputs(t *testing.T, svc *Service) int {
	t.Helper()
	n := 0
	err := backing(svc).Walk(context.Background(), fileserve.Outputs, func(m fileserve.Meta) error {
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// mcpgoClient connects mark3labs/mcp-go pinned to 2025-11-25 to url,
// listening on the session's standing stream; notes gets each
// notification.
func mcpgoClient(t *testing.T, url string, notes func(mcpgo.JSONRPCNotification)) (*mcpclient.Client, *mcpgo.InitializeResult) {
	t.Helper()
	c, init := mcptest.Connect(t, url+"/mcp", transport.WithContinuousListening())
	if notes != nil {
		c.OnNotification(notes)
	}
	return c, init
}

// startTask2025 sends a task-augmented tools/call (raw: mcp-go's CallTool
// wants content in every result) and returns the task.
func startTask2025(t *testing.T, c *mcpclient.Client, tool string) (mcpgo.Task, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
	defer cancel()
	ttl := int64(10 * 60 * 1000)
	resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcpgo.NewRequestId(rand.Int64()),
		Method: "tools/call", Params: mcpgo.CallToolParams{Name: tool, Arguments: map[string]any{}, Task: &mcpgo.TaskParams{TTL: &ttl}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		return mcpgo.Task{}, fmt.Errorf("%d %s", resp.Error.Code, resp.Error.Message)
	}
	var ctr struct {
		Task mcpgo.Task     `json:"task"`
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(resp.Result, &ctr); err != nil || ctr.Task.TaskId == "" || ctr.Task.Status != mcpgo.TaskStatusWorking {
		t.Fatalf("task-augmented tools/call answered %s (%v)", resp.Result, err)
	}
	if ctr.Task.TTL == nil || *ctr.Task.TTL != ttl || ctr.Meta["io.modelcontextprotocol/model-immediate-response"] == nil {
		t.Errorf("the task's ttl %v (asked %d), _meta %v", ctr.Task.TTL, ttl, ctr.Meta)
	}
	return ctr.Task, nil
}

// A client pinned to 2025-11-25 (mark3labs/mcp-go) runs a task to
// completion, in both configurations: the tasks capability, taskSupport
// "optional" on a long tool only, a task-augmented call, tasks/get,
// tasks/list, WaitForTask and tasks/result (the file's digest that of its
// bytes, the related-task _meta); notifications/tasks/status on the
// session's stream (default configuration); a cancel that stops the tool,
// and a second one refused (-32602); a task asked of a tool that is not
// long, refused (-32601).
func TestTasksCore2025(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "stateless"}[stateless], func(t *testing.T) {
			svcs, urls, long := taskReplicas(t, 1, func(c *Config) { c.MCPStateless = stateless })
			var statuses sync.Map
			c, init := mcpgoClient(t, urls[0], func(n mcpgo.JSONRPCNotification) {
				if n.Method == "notifications/tasks/status" {
					statuses.Store(fmt.Sprintf("%v %v", n.Params.AdditionalFields["taskId"], n.Params.AdditionalFields["status"]), true)
				}
			})
			if init.ProtocolVersion != mcpgo.ProtocolVersion20251125 || init.Capabilities.Tasks == nil || init.Capabilities.Tasks.Requests == nil ||
				init.Capabilities.Tasks.Cancel == nil || init.Capabilities.Tasks.List == nil {
				t.Fatalf("initialize: %s, tasks capability %+v", init.ProtocolVersion, init.Capabilities.Tasks)
			}
			ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
			defer cancel()
			tools, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools.Tools {
				if tool.Execution == nil || tool.Execution.TaskSupport != mcpgo.TaskSupportOptional {
					t.Errorf("tool %s: execution %+v, want taskSupport optional", tool.Name, tool.Execution)
				}
			}

			if !stateless {
				// mcp-go opens the session's standing stream a moment after
				// initialize; the notifications go there.
				sid := c.GetSessionId()
				for deadline := time.Now().Add(10 * time.Second); !svcs[0].mcp.StreamOpen(sid); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("mcp-go opened no standing stream")
					}
				}
			}
			task, err := startTask2025(t, c, "long")
			if err != nil {
				t.Fatal(err)
			}
			<-long.started
			got, err := c.GetTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: task.TaskId}})
			if err != nil || got.Status != mcpgo.TaskStatusWorking || got.PollInterval == nil {
				t.Fatalf("tasks/get: %v %+v", err, got)
			}
			// An anonymous caller's tasks are those of its session: served
			// statelessly, mcp-go has none (and keeps no owner handle).
			listed, err := c.ListTasks(ctx, mcpgo.ListTasksRequest{})
			if stateless && (err != nil || len(listed.Tasks) != 0) {
				t.Errorf("tasks/list without a session: %v %+v", err, listed)
			} else if !stateless && (err != nil || len(listed.Tasks) != 1 || listed.Tasks[0].TaskId != task.TaskId) {
				t.Errorf("tasks/list: %v %+v", err, listed)
			}
			long.releaseAll()
			if err := <-long.stopped; err != nil {
				t.Fatal(err)
			}
			fin, err := c.WaitForTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: task.TaskId}}, 50*time.Millisecond)
			if err != nil || fin.Status != mcpgo.TaskStatusCompleted {
				t.Fatalf("WaitForTask: %v %+v", err, fin)
			}
			res, err := c.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: task.TaskId}})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(res)
			name, digest, body := fileOf(t, raw)
			sum := sha256.Sum256(body)
			if name != "result.txt" || digest != hex.EncodeToString(sum[:]) {
				t.Errorf("tasks/result's file: %s, sha256 %s", name, digest)
			}
			if !strings.Contains(string(raw), `"io.modelcontextprotocol/related-task":{"taskId":"`+task.TaskId+`"}`) {
				t.Errorf("tasks/result without the related-task _meta: %s", raw)
			}
			if !stateless {
				deadline := time.Now().Add(10 * time.Second)
				for {
					if _, ok := statuses.Load(task.TaskId + " completed"); ok {
						break
					}
					if time.Now().After(deadline) {
						t.Error("no notifications/tasks/status saying the task completed on the session's stream")
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}

			// A cancel stops the tool; a second cancel is refused.
			task, err = startTask2025(t, c, "long")
			if err != nil {
				t.Fatal(err)
			}
			<-long.started
			cr, err := c.CancelTask(ctx, mcpgo.CancelTaskRequest{Params: mcpgo.CancelTaskParams{TaskId: task.TaskId}})
			if err != nil || cr.Status != mcpgo.TaskStatusCancelled {
				t.Fatalf("tasks/cancel: %v %+v", err, cr)
			}
			select {
			case err := <-long.stopped:
				if err == nil {
					t.Error("the tool finished instead of stopping")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the tool did not stop after tasks/cancel")
			}
			if _, err := c.CancelTask(ctx, mcpgo.CancelTaskRequest{Params: mcpgo.CancelTaskParams{TaskId: task.TaskId}}); err == nil || !strings.Contains(err.Error(), "terminal status") {
				t.Errorf("a second tasks/cancel: %v", err)
			}
		})
	}
}

// A task whose replica stopped renewing its lease (it died) is reported
// failed, with the reason, by any replica, and the failure is recorded:
// an MCP task whose lease ran out, one that never got a lease and is older
// than one, and an A2A task likewise; a task whose lease is alive stays
// working; one past its TTL has expired.
func TestTaskLeaseLapsed(t *testing.T) {
	svcs, urls, _ := taskReplicas(t, 1, func(c *Config) { c.TaskLease = 2 * time.Second })
	svc, c := svcs[0], tasksClient(urls[0])
	ctx := context.Background()
	rs := backing(svc).(fileserve.RecordStore)
	put := func(kind, id string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if err := rs.PutRecord(ctx, kind, AnonymousOwner, id, b); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	working := func(id string, updated time.Time) *tasks.Task {
		return &tasks.Task{ID: id, Owner: AnonymousOwner, Tool: "long", Status: tasks.Working, Created: updated, Updated: updated, TTL: time.Hour}
	}
	put(tasks.MCPKind, "LAPSEDAAAAAAAAAAAAAAAAAAAA", working("LAPSEDAAAAAAAAAAAAAAAAAAAA", now))
	put(tasks.LeaseKind, "LAPSEDAAAAAAAAAAAAAAAAAAAA", map[string]any{"replica": "dead", "until": now.Add(-time.Second)})
	put(tasks.MCPKind, "NEVERLEASEDAAAAAAAAAAAAAAA", working("NEVERLEASEDAAAAAAAAAAAAAAA", now.Add(-time.Minute)))
	put(tasks.MCPKind, "ALIVEAAAAAAAAAAAAAAAAAAAAA", working("ALIVEAAAAAAAAAAAAAAAAAAAAA", now.Add(-time.Minute)))
	put(tasks.LeaseKind, "ALIVEAAAAAAAAAAAAAAAAAAAAA", map[string]any{"replica": "other", "until": now.Add(time.Minute)})
	for _, id := range []string{"LAPSEDAAAAAAAAAAAAAAAAAAAA", "NEVERLEASEDAAAAAAAAAAAAAAA"} {
		got := getTask(t, c, id)
		if got.Status != "failed" || got.Error == nil || !strings.Contains(got.Error.Message, "lease ran out") || !strings.Contains(got.StatusMessage, "replica") {
			t.Errorf("task %s after its replica died: %+v", id, got)
		}
		if rec, err := svc.tasks.Read(ctx, AnonymousOwner, id); err != nil || rec.Status != tasks.Failed {
			t.Errorf("task %s: the failure is not recorded: %v %+v", id, err, rec)
		}
	}
	if got := getTask(t, c, "ALIVEAAAAAAAAAAAAAAAAAAAAA"); got.Status != "working" {
		t.Errorf("a task whose lease is alive: %+v", got)
	}
	// A task past its TTL is gone for its caller, whether or not the
	// sweeper removed it yet.
	old := working("OLDAAAAAAAAAAAAAAAAAAAAAAA", now.Add(-2*time.Hour))
	old.Status, old.Result = tasks.Completed, &tasks.KeptResult{Text: "done long ago"}
	put(tasks.MCPKind, "OLDAAAAAAAAAAAAAAAAAAAAAAA", old)
	if ans := send(t, c, "tasks/get", map[string]any{"taskId": "OLDAAAAAAAAAAAAAAAAAAAAAAA"}); ans.Response.Error == nil || ans.Response.Error.Code != -32602 ||
		!strings.Contains(ans.Response.Error.Message, "expired") {
		t.Errorf("tasks/get of a task past its TTL: %s %+v", ans.Response.Result, ans.Response.Error)
	}

	shared := tasks.NewShared(rs, svc.ledger, callers.OwnerOf)
	task := &a2a.Task{ID: a2a.NewTaskID(), ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	put(tasks.A2AKind, string(task.ID), map[string]any{"owner": AnonymousOwner, "task": task, "updated": now.Add(-time.Minute)})
	got, err := shared.Get(ctx, task.ID)
	if err != nil || got.Status.State != a2a.TaskStateFailed || got.Status.Message == nil ||
		!strings.Contains(fmt.Sprint(got.Status.Message.Parts), "lease ran out") {
		t.Fatalf("an A2A task whose replica died: %v %+v", err, got)
	}
}

// Under AGENT_AUTH=jwt a task is its caller's: another caller's tasks/get,
// tasks/cancel and listen for it answer "not found" (or agree to nothing),
// and its cancel does not stop it.
func TestTaskOwnerIsolation(t *testing.T) {
	secret := strings.Repeat("s", 32)
	_, urls, long := taskReplicas(t, 1, func(c *Config) { c.Auth, c.AuthJWTSecret = "jwt", secret })
	alice, mallory := tasksClient(urls[0]), tasksClient(urls[0])
	alice.Header = http.Header{"Authorization": {"Bearer " + mcptest.BearerToken(t, secret, "alice")}}
	mallory.Header = http.Header{"Authorization": {"Bearer " + mcptest.BearerToken(t, secret, "mallory")}}
	task := startTask(t, alice)
	<-long.started
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		ans := send(t, mallory, method, map[string]any{"taskId": task.TaskID})
		if ans.Response.Error == nil || ans.Response.Error.Code != -32602 || !strings.Contains(ans.Response.Error.Message, "not found") {
			t.Errorf("%s of another caller's task: %s %+v", method, ans.Response.Result, ans.Response.Error)
		}
	}
	l := mallory.Listen(t, map[string]any{"taskIds": []string{task.TaskID}})
	ack := l.Wait(t, "notifications/subscriptions/acknowledged")
	if strings.Contains(string(ack.Params), task.TaskID) {
		t.Errorf("a listen agreed to another caller's task: %s", ack.Params)
	}
	if got := getTask(t, alice, task.TaskID); got.Status != "working" {
		t.Errorf("the owner's task after another caller's cancel: %+v", got)
	}
	long.releaseAll()
	waitTask(t, alice, task.TaskID, "completed")
}

// An owner has at most AGENT_TASKS_PER_OWNER tasks running: one more is
// refused with a tool error that says so, and once one ended a new one
// starts.
func TestTasksPerOwner(t *testing.T) {
	_, urls, long := taskReplicas(t, 1, func(c *Config) { c.TasksPerOwner = 2 })
	c := tasksClient(urls[0])
	a, b := startTask(t, c), startTask(t, c)
	<-long.started
	<-long.started
	over := send(t, c, "tools/call", map[string]any{"name": "long", "arguments": map[string]any{}})
	if !strings.Contains(string(over.Response.Result), `"isError":true`) || !strings.Contains(string(over.Response.Result), "AGENT_TASKS_PER_OWNER") {
		t.Errorf("a third task over a limit of 2: %s %+v", over.Response.Result, over.Response.Error)
	}
	long.releaseAll()
	waitTask(t, c, a.TaskID, "completed")
	waitTask(t, c, b.TaskID, "completed")
	startTask(t, c)
	<-long.started
	long.releaseAll()
}

// notifications/tasks over subscriptions/listen (2026-07-28): the
// acknowledgement lists the tasks agreed (an unknown id is not), each
// change of a task is told with the task as tasks/get has it, the result
// inlined at the end, and the stream ends with its result once every task
// ended. A listen whose client does not declare the extension: -32021.
func TestTaskNotificationsOnListen(t *testing.T) {
	dir := t.TempDir()
	_, urls, long := taskReplicas(t, 2, func(c *Config) { c.DataDir = dir })
	a, b := tasksClient(urls[0]), tasksClient(urls[1])
	task := startTask(t, a)
	<-long.started
	l := b.Listen(t, map[string]any{"taskIds": []string{task.TaskID, "UNKNOWN"}}) // on the other replica
	ack := l.Wait(t, "notifications/subscriptions/acknowledged")
	var acked struct {
		Meta          map[string]any `json:"_meta"`
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	}
	if json.Unmarshal(ack.Params, &acked); len(acked.Notifications.TaskIDs) != 1 || acked.Notifications.TaskIDs[0] != task.TaskID ||
		acked.Meta["io.modelcontextprotocol/subscriptionId"] == nil {
		t.Fatalf("acknowledged: %s", ack.Params)
	}
	first := l.Wait(t, "notifications/tasks")
	if !strings.Contains(string(first.Params), `"status":"working"`) {
		t.Errorf("first notifications/tasks: %s", first.Params)
	}
	long.releaseAll()
	var last wireTask
	for last.Status != "completed" {
		n := l.Wait(t, "notifications/tasks")
		last = wireTask{}
		json.Unmarshal(n.Params, &last)
	}
	if name, _, _ := fileOf(t, last.Result); name != "result.txt" || last.Meta["io.modelcontextprotocol/subscriptionId"] == nil {
		t.Errorf("the last notifications/tasks: %+v", last)
	}
	select { // the stream ends: every task it follows ended
	case _, open := <-l.Notifications:
		for open {
			_, open = <-l.Notifications
		}
	case <-time.After(mcptest.CallTimeout):
		t.Error("the listen stream did not end once its tasks ended")
	}

	plain := mcptest.NewSessionless(urls[0] + "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
	defer cancel()
	ans, err := plain.Send(ctx, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{task.TaskID}}}, nil)
	if err != nil || ans.Status != http.StatusBadRequest || ans.Response.Error == nil || ans.Response.Error.Code != -32021 {
		t.Errorf("a listen for tasks without the extension: %v %+v", err, ans)
	}
}

// The sweeper removes the task records past their age — MCP task records
// and cancel markers AGENT_OUTPUT_TTL after their last write, leases
// tasks.LeaseSweep after theirs — and leaves younger ones; the owner's
// charge counts only the task records left against the quota as soon as
// the sweep ends.
func TestSweeperRemovesExpiredTaskRecords(t *testing.T) {
	const ttl = time.Hour
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc := newTestService(t, func(c *Config) { c.Store, c.OutputTTL, c.OwnerQuotaBytes = disk, ttl, 1<<20 })
	ctx := context.Background()
	const owner = "alice"
	ages := map[string]time.Duration{tasks.MCPKind: ttl, tasks.CancelKind: ttl, tasks.LeaseKind: tasks.LeaseSweep}
	for kind, age := range ages {
		for id, written := range map[string]time.Time{"OLD": time.Now().Add(-age - time.Minute), "YOUNG": time.Now().Add(-age + time.Minute)} {
			if err := disk.PutRecord(ctx, kind, owner, id, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(filepath.Join(disk.Root(), fileserve.RecordsDir, kind, fileserve.OwnerKey(owner), id), written, written); err != nil {
				t.Fatal(err)
			}
		}
	}
	charged := func() int64 {
		t.Helper()
		used, err := svc.quota.Used(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		return used
	}
	if err := svc.ledger.Charge(ctx, owner, 0, false); err != nil { // as a task's start or end does
		t.Fatal(err)
	}
	if got := charged(); got != 2*tasks.RecordCharge {
		t.Errorf("before the sweep the owner is charged %d bytes, want its 2 MCP task records (%d)", got, 2*tasks.RecordCharge)
	}

	svc.sweeper.Sweep(ctx)
	for kind := range ages {
		infos, err := disk.Records(ctx, kind, owner)
		var names []string
		for _, in := range infos {
			names = append(names, in.Name)
		}
		if err != nil || len(names) != 1 || names[0] != "YOUNG" {
			t.Errorf("%s records after the sweep: %v %v, want YOUNG only", kind, names, err)
		}
	}
	if got := charged(); got != tasks.RecordCharge {
		t.Errorf("after the sweep the owner is charged %d bytes, want its one MCP task record left (%d)", got, tasks.RecordCharge)
	}
}
