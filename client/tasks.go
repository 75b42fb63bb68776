package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP tasks (the Tasks extension of 2026-07-28): with Config.Tasks the
// middleware declares the extension on tools/call, and an agent answers a
// call of a long tool with a task instead of holding the request for
// minutes. The go-sdk client knows no tasks: it decodes the task into an
// empty CallToolResult and drops its id. So the transport's HTTP client is
// wrapped (WithTasks) to read the task from the answer as it passes, and
// tasks/get and tasks/cancel are custom methods of the go-sdk client.
//
// A plain ClientSession.CallTool then waits for the task, polling it, and
// returns its result, its files fetched as for any call: a host that knows
// nothing of tasks gets what it got before, and a dropped connection or a
// proxy's idle timeout no longer loses the work. StartTool returns the task
// instead, for a host that follows it itself (GetTask, WaitTask,
// CancelTask), across restarts if it keeps the id.

// ExtTasks is the name of the Tasks extension.
const ExtTasks = "io.modelcontextprotocol/tasks"

// Task statuses.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Task is an MCP task as an agent reports it.
type Task struct {
	// ID names the task; with the agent's URL it is all a host needs to
	// follow it later.
	ID            string
	Status        string
	StatusMessage string
	CreatedAt     time.Time
	LastUpdatedAt time.Time
	// TTL is how long the task is kept after its creation (0: unlimited).
	TTL time.Duration
	// PollInterval is how often the agent asks to be polled.
	PollInterval time.Duration
	// Progress and Total are the tool's last progress report (Total 0:
	// unknown), when the agent tells it.
	Progress, Total float64
	// Result is the tool's result once completed, its files fetched and
	// rewritten as for any call (see Middleware).
	Result *mcp.CallToolResult
	// Err is the error of a failed task.
	Err *TaskError
}

// Ended reports whether the task is in a terminal status.
func (t *Task) Ended() bool {
	return t.Status == TaskCompleted || t.Status == TaskFailed || t.Status == TaskCancelled
}

// TaskError is the JSON-RPC error a failed task ended with.
type TaskError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *TaskError) Error() string { return e.Message }

// ErrTaskRunning is what CallTool returns when its context ends while the
// agent still runs its task: the work goes on, and the *TaskRunningError
// names the task to resume with GetTask or WaitTask.
var ErrTaskRunning = errors.New("the call is still running as a task")

// TaskRunningError says which task a call left running.
type TaskRunningError struct {
	Task  *Task
	Cause error
}

func (e *TaskRunningError) Error() string {
	return fmt.Sprintf("%v: task %s (%s); its result can be fetched until it expires", ErrTaskRunning, e.Task.ID, e.Cause)
}

func (e *TaskRunningError) Unwrap() []error { return []error{ErrTaskRunning, e.Cause} }

// wireTask is a Task as the extension writes it: CreateTaskResult,
// tasks/get's result and notifications/tasks.
type wireTask struct {
	mcp.ResultBase
	ResultType     string          `json:"resultType,omitempty"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt,omitempty"`
	LastUpdatedAt  string          `json:"lastUpdatedAt,omitempty"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs *int64          `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *TaskError      `json:"error,omitempty"`
}

// task turns the wire form into a Task (its result decoded, not yet
// collected).
func (w *wireTask) task() (*Task, error) {
	t := &Task{ID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage, Err: w.Error}
	t.CreatedAt, _ = time.Parse(time.RFC3339Nano, w.CreatedAt)
	t.LastUpdatedAt, _ = time.Parse(time.RFC3339Nano, w.LastUpdatedAt)
	if w.TTLMs != nil {
		t.TTL = time.Duration(*w.TTLMs) * time.Millisecond
	}
	if w.PollIntervalMs != nil {
		t.PollInterval = time.Duration(*w.PollIntervalMs) * time.Millisecond
	}
	if p, ok := w.Meta[transfer.MetaTaskProgress].(map[string]any); ok {
		t.Progress, _ = p["progress"].(float64)
		t.Total, _ = p["total"].(float64)
	}
	if len(w.Result) > 0 && string(w.Result) != "null" {
		if r, ok := readableResult(w.Result); ok {
			w.Result = r
		}
		t.Result = &mcp.CallToolResult{}
		if err := json.Unmarshal(w.Result, t.Result); err != nil {
			return nil, fmt.Errorf("task %s: its result is not a tool result: %w", w.TaskID, err)
		}
	}
	return t, nil
}

// taskParams are the params of tasks/get and tasks/cancel.
type taskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// ackResult is the empty answer of tasks/cancel.
type ackResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType,omitempty"`
}

// RegisterTaskMethods lets c send the tasks/get and tasks/cancel of
// GetTask, WaitTask and CancelTask; Attach does it. A host that calls a
// session's tools without the middleware attached (the gateway) calls it,
// and declares the extension in its client's capabilities
// (TaskCapabilities).
func RegisterTaskMethods(c *mcp.Client) {
	_ = mcp.AddSendingCustomMethod[*taskParams, *wireTask](c, "tasks/get")
	_ = mcp.AddSendingCustomMethod[*taskParams, *ackResult](c, "tasks/cancel")
}

// TaskCapabilities returns caps (nil: the go-sdk client's default, roots
// whose list may change) declaring the Tasks extension, for
// mcp.ClientOptions.Capabilities: every request of that client then
// declares it, and its transport needs an HTTP client from WithTasks.
func TaskCapabilities(caps *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	out := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	if caps != nil {
		c := *caps
		out = &c
	}
	out.Extensions = maps.Clone(out.Extensions) // caps' own map stays as it was
	out.AddExtension(ExtTasks, nil)
	return out
}

// taskBox carries, in a request's context, what the HTTP client saw of a
// task: the task a tools/call was answered with, and the task a tasks/*
// request names (its Mcp-Name header).
type taskBox struct {
	name string                   // Mcp-Name for tasks/*
	task atomic.Pointer[wireTask] // set when a tools/call was answered with a task
}

type taskBoxKey struct{}

func boxFrom(ctx context.Context) *taskBox {
	b, _ := ctx.Value(taskBoxKey{}).(*taskBox)
	return b
}

// WithTasks returns an HTTP client for an MCP transport (the go-sdk's
// StreamableClientTransport.HTTPClient) that lets the middleware see the
// tasks an agent answers with, and rewrites the content blocks of answers
// that the go-sdk cannot decode into blocks it can (content.go), so that a
// result with the draft MCP file contract's file blocks is not lost, and
// adds capabilities.files to the initialize of a client that declares it
// (DeclareFiles); hc nil means http.DefaultClient. Without it a Config.Tasks middleware
// cannot tell a task from an empty result, and refuses to declare the
// extension.
func WithTasks(hc *http.Client) *http.Client {
	return withTransport(hc, func(base http.RoundTripper) http.RoundTripper { return answerTripper{base} })
}

// withTransport returns a copy of hc (nil: http.DefaultClient) whose
// transport is wrap of hc's (nil: http.DefaultTransport).
func withTransport(hc *http.Client, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	out := *cmp.Or(hc, http.DefaultClient)
	out.Transport = wrap(cmp.Or(out.Transport, http.DefaultTransport))
	return &out
}

// answerTripper sets the Mcp-Name of tasks/* requests, reads the task out
// of a tools/call's answer, and makes every JSON-RPC answer readable by
// the go-sdk (readableMessage).
type answerTripper struct{ base http.RoundTripper }

func (t answerTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = declareFilesHTTP(req) // the initialize of a client that declares files (capability.go)
	box := boxFrom(req.Context())
	if box != nil && box.name != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Mcp-Name", box.name)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	see := func(msg []byte) ([]byte, bool) {
		if box != nil && box.name == "" {
			box.see(msg)
		}
		return readableMessage(msg)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			return resp, nil
		}
		if out, changed := see(body); changed {
			body = out
			resp.ContentLength = int64(len(body))
			resp.Header.Del("Content-Length")
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	case "text/event-stream":
		resp.Body = &heldUnits{rc: resp.Body, max: maxSSEEvent, blankEnds: true, each: rewriteEvent(see)}
	}
	return resp, nil
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// see records the task a JSON-RPC response carries, if it carries one.
func (b *taskBox) see(msg []byte) {
	var m struct {
		Result *wireTask `json:"result"`
	}
	if json.Unmarshal(msg, &m) == nil && m.Result != nil && m.Result.ResultType == "task" && m.Result.TaskID != "" {
		b.task.Store(m.Result)
	}
}

// maxSSEEvent bounds the event an SSE answer's events are held to: from
// an event larger than that on, the stream goes on untouched.
const maxSSEEvent = 64 << 20

// rewriteEvent gives fn the data of an SSE event (its data lines joined
// with \n); when fn changes it, the event goes on with the new data after
// its other fields, else as it came. An event the stream ended in before
// its blank line (not whole) is rewritten all the same: the go-sdk reads
// it too.
func rewriteEvent(fn func([]byte) ([]byte, bool)) func(unit [][]byte, whole bool) [][]byte {
	return func(unit [][]byte, whole bool) [][]byte {
		var data, out bytes.Buffer // out: the other fields, then the new data
		var end []byte             // the blank line that ends the event, \r and all
		lines := 0
		for l := range bytes.Lines(bytes.Join(unit, nil)) {
			line := bytes.TrimSuffix(bytes.TrimSuffix(l, []byte("\n")), []byte("\r"))
			d, isData := bytes.CutPrefix(line, []byte("data:"))
			switch {
			case len(bytes.Trim(l, "\r\n")) == 0:
				end = l
			case isData:
				if lines++; lines > 1 {
					data.WriteByte('\n')
				}
				data.Write(bytes.TrimPrefix(d, []byte(" ")))
			default:
				out.Write(bytes.TrimSuffix(l, []byte("\n")))
				out.WriteByte('\n')
			}
		}
		if lines == 0 {
			return unit
		}
		changed, ok := fn(data.Bytes())
		if !ok {
			return unit
		}
		for l := range bytes.Lines(changed) {
			out.WriteString("data: ")
			out.Write(bytes.TrimSuffix(l, []byte("\n")))
			out.WriteByte('\n')
		}
		if whole {
			out.Write(end)
		}
		return [][]byte{out.Bytes()}
	}
}

// declareTasks adds the Tasks extension to the client capabilities of a
// 2026-07-28 request's _meta (the go-sdk put the client's own there).
func declareTasks(req mcp.Request) {
	p := req.GetParams()
	if p == nil {
		return
	}
	meta := p.GetMeta()
	v, ok := meta[mcp.MetaKeyClientCapabilities]
	if !ok {
		return // an older revision: capabilities were declared in initialize
	}
	var caps map[string]any
	b, _ := json.Marshal(v)
	if json.Unmarshal(b, &caps) != nil || caps == nil {
		caps = map[string]any{}
	}
	exts, _ := caps["extensions"].(map[string]any)
	if exts == nil {
		exts = map[string]any{}
	}
	exts[ExtTasks] = map[string]any{}
	caps["extensions"] = exts
	meta[mcp.MetaKeyClientCapabilities] = caps
	p.SetMeta(meta)
}

// startKey marks a tools/call whose caller follows a task itself
// (StartTool): the middleware returns at once.
type startKey struct{}

// StartTool calls a tool and returns its result, or, when the agent made
// a task of the call, the task (and a nil result), which the caller
// follows with GetTask or WaitTask. The middleware must have Config.Tasks
// and the session's transport an HTTP client from WithTasks.
func (m *Middleware) StartTool(ctx context.Context, session *mcp.ClientSession, params *mcp.CallToolParams) (*mcp.CallToolResult, *Task, error) {
	box := &taskBox{}
	ctx = context.WithValue(context.WithValue(ctx, taskBoxKey{}, box), startKey{}, true)
	res, err := session.CallTool(ctx, params)
	if err != nil {
		return nil, nil, err
	}
	if w := box.task.Load(); w != nil {
		t, err := w.task()
		return nil, t, err
	}
	return res, nil, nil
}

// GetTask asks the agent about task id. A completed task's result has
// its files fetched and rewritten, as a tool call's would (once per call
// of GetTask: a host asks again only to fetch them again).
func (m *Middleware) GetTask(ctx context.Context, session *mcp.ClientSession, id string) (*Task, error) {
	return m.getTask(ctx, session, id, true)
}

// getTask is GetTask, fetching a completed task's files when collect.
func (m *Middleware) getTask(ctx context.Context, session *mcp.ClientSession, id string, collect bool) (*Task, error) {
	ctx = context.WithValue(ctx, taskBoxKey{}, &taskBox{name: id})
	w, err := mcp.CallCustomMethod[*taskParams, *wireTask](ctx, session, "tasks/get", &taskParams{TaskID: id})
	if err != nil {
		return nil, fmt.Errorf("tasks/get %s: %w", id, err)
	}
	t, err := w.task()
	if err != nil {
		return nil, err
	}
	if collect && t.Result != nil && !t.Result.IsError {
		m.Collect(ctx, "task "+id, t.Result)
	}
	m.keepOwner(t.Result)
	return t, nil
}

// CancelTask asks the agent to cancel task id; the task may still end
// otherwise (GetTask tells).
func (m *Middleware) CancelTask(ctx context.Context, session *mcp.ClientSession, id string) error {
	ctx = context.WithValue(ctx, taskBoxKey{}, &taskBox{name: id})
	_, err := mcp.CallCustomMethod[*taskParams, *ackResult](ctx, session, "tasks/cancel", &taskParams{TaskID: id})
	if err != nil {
		return fmt.Errorf("tasks/cancel %s: %w", id, err)
	}
	return nil
}

// WaitTask polls task id at the interval the agent asks (at least 200 ms,
// 1 s when it asks none) until it ends, telling each answer to Config.Task.
// It returns the task's result (its files fetched), a *TaskError for a
// failed task, an error saying so for a cancelled one; when ctx ends first,
// a *TaskRunningError: the task runs on.
func (m *Middleware) WaitTask(ctx context.Context, session *mcp.ClientSession, id string) (*mcp.CallToolResult, error) {
	return m.waitTask(ctx, session, id, true)
}

// waitTask is WaitTask, fetching the result's files when collect.
func (m *Middleware) waitTask(ctx context.Context, session *mcp.ClientSession, id string, collect bool) (*mcp.CallToolResult, error) {
	for {
		t, err := m.getTask(context.WithoutCancel(ctx), session, id, collect)
		if err != nil {
			return nil, err
		}
		if m.cfg.Task != nil {
			m.cfg.Task(t)
		}
		switch t.Status {
		case TaskCompleted:
			if t.Result == nil {
				return nil, fmt.Errorf("task %s completed without a result", id)
			}
			return t.Result, nil
		case TaskFailed:
			if t.Err != nil {
				return nil, t.Err
			}
			return nil, fmt.Errorf("task %s failed: %s", id, t.StatusMessage)
		case TaskCancelled:
			return nil, fmt.Errorf("task %s was cancelled", id)
		case TaskInputRequired:
			return nil, fmt.Errorf("task %s asks for input, which this host cannot give: %s", id, t.StatusMessage)
		}
		wait := t.PollInterval
		if wait <= 0 {
			wait = time.Second
		}
		timer := time.NewTimer(max(wait, 200*time.Millisecond))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, &TaskRunningError{Task: t, Cause: context.Cause(ctx)}
		case <-timer.C:
		}
	}
}

// callAsTask is the tools/call of a Config.Tasks middleware: the extension
// declared, and a task the agent answers with waited for (unless the
// caller follows it itself: StartTool). The result's files are the
// caller's to fetch.
func (m *Middleware) callAsTask(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	box := boxFrom(ctx)
	if box == nil {
		box = &taskBox{}
		ctx = context.WithValue(ctx, taskBoxKey{}, box)
	}
	declareTasks(req)
	res, err := next(ctx, "tools/call", req)
	if err != nil {
		return res, err
	}
	w := box.task.Load()
	if w == nil {
		if b, _ := json.Marshal(res); bytes.Contains(b, []byte(`"resultType":"task"`)) {
			return nil, errors.New("the agent answered with a task the transport hid: give the MCP transport an HTTP client from client.WithTasks")
		}
		return res, nil
	}
	if follow, _ := ctx.Value(startKey{}).(bool); follow {
		return res, nil
	}
	session, _ := req.GetSession().(*mcp.ClientSession)
	if session == nil {
		return nil, fmt.Errorf("the agent answered with task %s, and there is no session to follow it", w.TaskID)
	}
	if t, err := w.task(); err == nil && m.cfg.Task != nil {
		m.cfg.Task(t)
	}
	return m.waitTask(ctx, session, w.TaskID, false)
}
