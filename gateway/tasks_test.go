package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
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

	tc := tasksHost(t, g)
	tk := startPassed(t, tc, 3000)
	if !strings.HasPrefix(tk.TaskID, "0.") || tk.Status != "working" {
		t.Fatalf("a host with tasks: %+v", tk)
	}
	tk = waitPassed(t, tc, tk.TaskID, "completed")
	if !strings.Contains(string(tk.Result), "saved as") || strings.Contains(string(tk.Result), "token=") {
		t.Errorf("the passed task's result: %s", tk.Result)
	}
	again := mcptest.Call[passed](t, tc, "tasks/get", map[string]any{"taskId": tk.TaskID})
	if string(again.Result) != string(tk.Result) {
		t.Errorf("a second read of the ended task: %s", again.Result)
	}
	plain := mcptest.NewSessionless(tc.URL)
	if ans, err := plain.Send(ctx, "tasks/get", map[string]any{"taskId": tk.TaskID}, nil); err != nil || ans.Response.Error == nil || ans.Response.Error.Code != -32021 {
		t.Errorf("tasks/get without the extension: %v %+v", err, ans)
	}
}

// passed is a task as the gateway passes it to a host.
type passed struct {
	ResultType    string          `json:"resultType"`
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage"`
	CreatedAt     time.Time       `json:"createdAt"`
	TTLMs         int64           `json:"ttlMs"`
	Result        json.RawMessage `json:"result"`
}

// tasksHost serves g's server over stateless HTTP to a host declaring the
// Tasks extension.
func tasksHost(t *testing.T, g *gateway.Gateway) *mcptest.Sessionless {
	t.Helper()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.Server() }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	tc := mcptest.NewSessionless(srv.URL)
	tc.Extensions = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	return tc
}

// startPassed calls long_sleep for millis through the host c and returns
// the task it is answered with.
func startPassed(t *testing.T, c *mcptest.Sessionless, millis int) passed {
	t.Helper()
	tk := mcptest.Call[passed](t, c, "tools/call", map[string]any{"name": "long_sleep", "arguments": map[string]any{"millis": millis}})
	if tk.ResultType != "task" || tk.TaskID == "" {
		t.Fatalf("long_sleep of %d ms through the gateway: %+v, want a task", millis, tk)
	}
	return tk
}

// waitPassed polls tasks/get on c until task id is in status want.
func waitPassed(t *testing.T, c *mcptest.Sessionless, id, want string) passed {
	t.Helper()
	var tk passed
	for deadline := time.Now().Add(time.Minute); tk.Status != want; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %+v after a minute, want %s", id, tk, want)
		}
		tk = mcptest.Call[passed](t, c, "tasks/get", map[string]any{"taskId": id})
	}
	return tk
}

// agentProxy stands between the gateway and a test agent, noting the
// tasks/* requests the gateway sends it.
type agentProxy struct {
	agent *testagent.Agent
	url   string // the MCP endpoint through the proxy
	mu    sync.Mutex
	seen  []taskRequest
}

// taskRequest is a tasks/* request the agent was sent.
type taskRequest struct{ method, taskID string }

// proxyAgent starts an agentProxy in front of a.
func proxyAgent(t *testing.T, a *testagent.Agent) *agentProxy {
	t.Helper()
	target, err := url.Parse(a.Base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &agentProxy{agent: a}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					TaskID string `json:"taskId"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && strings.HasPrefix(msg.Method, "tasks/") {
				p.mu.Lock()
				p.seen = append(p.seen, taskRequest{msg.Method, msg.Params.TaskID})
				p.mu.Unlock()
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL + "/mcp"
	return p
}

// config is the gateway's entry of the agent behind p: its produced
// files, whose URLs name the agent itself, may be fetched from there.
func (p *agentProxy) config() gateway.Agent {
	return gateway.Agent{URL: p.url, AllowHosts: []string{strings.TrimPrefix(p.agent.Base, "http://")}}
}

// first waits for the first request of method and returns its task id.
func (p *agentProxy) first(t *testing.T, method string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		p.mu.Lock()
		for _, r := range p.seen {
			if r.method == method {
				p.mu.Unlock()
				return r.taskID
			}
		}
		p.mu.Unlock()
	}
	t.Fatalf("the gateway sent the agent no %s in 30 s", method)
	return ""
}

// agentTask waits until the agent itself reports its task id in status
// want (asked directly, as the gateway's anonymous owner).
func agentTask(t *testing.T, a *testagent.Agent, id, want string) {
	t.Helper()
	c := mcptest.NewSessionless(a.Endpoint)
	c.Extensions = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	var tk passed
	for deadline := time.Now().Add(30 * time.Second); tk.Status != want; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent's task %s is %+v, want %s", id, tk, want)
		}
		tk = mcptest.Call[passed](t, c, "tasks/get", map[string]any{"taskId": id})
	}
}

// taskGateway starts a gateway of the agents, closed when the test ends.
func taskGateway(t *testing.T, out string, agents ...gateway.Agent) *gateway.Gateway {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.New(ctx, gateway.Config{Agents: agents, Roots: []string{t.TempDir()}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// The gateway keeps the tasks it passed to hosts in a bounded map: with
// room for two, a task that ended makes room for a new one, and once both
// entries are of running tasks a new task is refused with a tool error
// that says what to do, its task at the agent cancelled. An entry that
// went is only a cache: the ended task is still read through its id.
// Entries past their task's TTL (the agent's AGENT_OUTPUT_TTL) go.
func TestHostTasksBounded(t *testing.T) {
	const ttl = 8 * time.Second
	a := testagent.Start(t, testagent.Options{OutputTTL: ttl})
	p := proxyAgent(t, a)
	g := taskGateway(t, t.TempDir(), p.config())
	gateway.SetMaxHostTasks(g, 2)
	host := tasksHost(t, g)

	first := startPassed(t, host, 1200) // longer than the agent's grace of 1 s: a task
	waitPassed(t, host, first.TaskID, "completed")
	busy := []passed{startPassed(t, host, 6000), startPassed(t, host, 6000)}
	if n := gateway.HostTasks(g); n != 2 {
		t.Errorf("%d tasks kept, want the 2 running (the ended one made room)", n)
	}

	ans, err := host.Send(context.Background(), "tools/call", map[string]any{"name": "long_sleep", "arguments": map[string]any{"millis": 6000}}, nil)
	if err != nil || ans.Response.Error != nil {
		t.Fatalf("a third task while two run: %v %+v", err, ans)
	}
	var refused struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	json.Unmarshal(ans.Response.Result, &refused)
	if !refused.IsError || len(refused.Content) == 0 || !strings.Contains(refused.Content[0].Text, "none of them has ended") ||
		!strings.Contains(refused.Content[0].Text, "tasks/cancel") || !strings.Contains(refused.Content[0].Text, "was cancelled") {
		t.Errorf("a task over the gateway's limit: %s", ans.Response.Result)
	}
	agentTask(t, a, p.first(t, "tasks/cancel"), "cancelled")

	again := mcptest.Call[passed](t, host, "tasks/get", map[string]any{"taskId": first.TaskID})
	if again.Status != "completed" || !strings.Contains(string(again.Result), "saved as") {
		t.Errorf("the ended task whose entry made room, read again: %+v", again)
	}
	if n := gateway.HostTasks(g); n != 2 {
		t.Errorf("%d tasks kept after reading the ended one, want still 2", n)
	}

	if busy[1].TTLMs != ttl.Milliseconds() || busy[1].CreatedAt.IsZero() {
		t.Fatalf("the agent's task: %+v, want a TTL of %v and its creation", busy[1], ttl)
	}
	time.Sleep(time.Until(busy[1].CreatedAt.Add(ttl + 100*time.Millisecond)))
	startPassed(t, host, 1200)
	if n := gateway.HostTasks(g); n != 1 {
		t.Errorf("%d tasks kept once the others' TTL passed, want the new one only", n)
	}
}

// A host follows a task passed to it across a restart of the gateway: the
// new gateway keeps nothing, and resolves the id (the agent's index and
// the agent's task id) to the agent's task, its result saved in Out. Ids
// not of that form, of no agent, or of no task of the agent's are not
// found.
func TestHostTaskAfterRestart(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	out := t.TempDir()
	before := taskGateway(t, out, gateway.Agent{URL: a.Endpoint})
	tk := startPassed(t, tasksHost(t, before), 1500)
	before.Close()

	after := taskGateway(t, out, gateway.Agent{URL: a.Endpoint})
	host := tasksHost(t, after)
	if n := gateway.HostTasks(after); n != 0 {
		t.Fatalf("a new gateway keeps %d tasks", n)
	}
	done := waitPassed(t, host, tk.TaskID, "completed")
	var res mcp.CallToolResult
	if err := json.Unmarshal(done.Result, &res); err != nil {
		t.Fatalf("the result: %s: %v", done.Result, err)
	}
	m := savedAs.FindStringSubmatch(resultText(&res))
	if m == nil || !strings.HasPrefix(m[2], out+string(filepath.Separator)) {
		t.Fatalf("the task's file, saved in Out after the restart: %q", resultText(&res))
	}
	if b, err := os.ReadFile(m[2]); err != nil || string(b) != "slept 1500 ms\n" {
		t.Errorf("the task's file in Out: %q %v", b, err)
	}
	if n := gateway.HostTasks(after); n != 1 {
		t.Errorf("%d tasks kept after reading the resumed one, want 1", n)
	}
	agentID := strings.TrimPrefix(tk.TaskID, "0.")
	for _, id := range []string{"1." + agentID, "00." + agentID, "0.", agentID, "0.NOSUCHTASK"} {
		ans, err := host.Send(context.Background(), "tasks/get", map[string]any{"taskId": id}, nil)
		if err != nil || ans.Response.Error == nil || ans.Response.Error.Code != -32602 {
			t.Errorf("tasks/get %q: %v %+v, want not found", id, err, ans)
		}
	}
}

// A host that does not support tasks and gives up its call (the go-sdk
// client sends notifications/cancelled) has the agent's task cancelled:
// the gateway sends tasks/cancel for the task it waited for, and the
// agent reports it cancelled.
func TestTaskCancelledWhenHostGivesUp(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	p := proxyAgent(t, a)
	g := taskGateway(t, t.TempDir(), p.config())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callCtx, giveUp := context.WithCancel(ctx)
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "long_sleep", Arguments: map[string]any{"millis": 60000}})
		called <- err
	}()
	id := p.first(t, "tasks/get") // the gateway waits for the agent's task
	giveUp()
	if err := <-called; err == nil {
		t.Error("the abandoned call returned no error")
	}
	if got := p.first(t, "tasks/cancel"); got != id {
		t.Errorf("the gateway cancelled task %q, want the call's %q", got, id)
	}
	agentTask(t, a, id, "cancelled")
}

// A host that supports tasks cancels a passed task with tasks/cancel: the
// gateway forwards it to the agent, and the task ends cancelled, as the
// host reads it through the gateway and as the agent reports it. The
// cancelled task's entry makes room at once, as the refusal of a task
// over the limit says: with room for one, the next task is taken on
// before the host reads the cancelled one again.
func TestHostTaskCancel(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	p := proxyAgent(t, a)
	g := taskGateway(t, t.TempDir(), p.config())
	gateway.SetMaxHostTasks(g, 1)
	host := tasksHost(t, g)
	tk := startPassed(t, host, 60000)
	if ans := mcptest.Call[map[string]any](t, host, "tasks/cancel", map[string]any{"taskId": tk.TaskID}); ans["resultType"] != "complete" {
		t.Errorf("tasks/cancel: %v", ans)
	}
	next := startPassed(t, host, 1200) // fails the test unless a task
	if n := gateway.HostTasks(g); n != 1 {
		t.Errorf("%d tasks kept, want the next one only (the cancelled one made room)", n)
	}
	agentID := strings.TrimPrefix(tk.TaskID, "0.")
	if got := p.first(t, "tasks/cancel"); got != agentID {
		t.Errorf("the gateway cancelled the agent's task %q, want %q", got, agentID)
	}
	if got := waitPassed(t, host, tk.TaskID, "cancelled"); got.Result != nil {
		t.Errorf("a cancelled task with a result: %s", got.Result)
	}
	agentTask(t, a, agentID, "cancelled")
	waitPassed(t, host, next.TaskID, "completed")
}
