package agentcore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/mcptest"
	"github.com/agentura/agentura/internal/s3test"
)

// longTool is a Long tool of a test replica: it reports progress, then
// waits until released (producing a file) or canceled.
type longTool struct {
	release chan struct{}
	started chan string   // the replica that started
	stopped chan error    // how it ended
	running atomic.Int32  // calls running now
	payload []byte        // the file it produces
}

func newLongTool() *longTool {
	return &longTool{release: make(chan struct{}), started: make(chan string, 16), stopped: make(chan error, 16),
		payload: []byte(strings.Repeat("the result of a long call\n", 100))}
}

// add registers the tool, called "long", on svc, a replica called name,
// and a quick Long tool "short" that ends at once.
func (l *longTool) add(svc *Service, name string) {
	AddTool(svc, Tool{Name: "long", Long: true}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		l.running.Add(1)
		defer l.running.Add(-1)
		l.started <- name
		call.Progress(1, 3, "page 1 of 3 read on "+name)
		select {
		case <-ctx.Done():
			l.stopped <- ctx.Err()
			return nil, ctx.Err()
		case <-l.release:
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

	close(long.release)
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
	go func() { <-long.started }()
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
		c.AWSAccessKeyID, c.AWSSecretAccessKey = srv.AccessKey, srv.SecretKey
		c.SigningKeys = []string{"0123456789abcdef0123456789abcdef0123456789abcdef"}
	})
}

// countOutputs counts the outputs in svc's store.
func countOutputs(t *testing.T, svc *Service) int {
	t.Helper()
	n := 0
	err := svc.backing.Walk(context.Background(), fileserve.Outputs, func(m fileserve.Meta) error {
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var _ = fmt.Sprint
