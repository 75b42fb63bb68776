package mcpbind

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP tasks on each revision. The go-sdk (v1.8.0) has none, so they are
// served beside it: a receiving middleware answers a tools/call with a task
// and adds what 2025-11-25 declares (capabilities.Tasks in initialize,
// execution.taskSupport in tools/list); tasks/* are custom methods.
//
//   - 2026-07-28, the Tasks extension (SEP-2663): a request whose client
//     capabilities declare io.modelcontextprotocol/tasks, calling a Long
//     tool, is answered {"resultType":"task", taskId, status, ttlMs,
//     pollIntervalMs, ...} unless the call ends within taskGrace (then with
//     its result, as without tasks). tasks/get inlines the result or error
//     of an ended task; tasks/cancel and tasks/update are acknowledged;
//     tasks/result and tasks/list do not exist (-32601). A tasks/* request
//     whose client does not declare the extension gets -32021.
//   - 2025-11-25, tasks in the core (SEP-1686): a tools/call with a "task"
//     parameter (which the go-sdk drops; tasks_http.go reads it first) of a
//     tool whose execution.taskSupport is "optional" (a Long tool) is
//     answered {"task": {...}}; tasks/get, tasks/result (blocks until the
//     end), tasks/list (the caller's own) and tasks/cancel (the task, or
//     -32602 once it ended). A tool result with isError is a "failed" task
//     there, a "completed" one on 2026-07-28.
//
// Either way the task is the same record (tasks_mcp.go): a task made over
// one revision is read over the other, on any replica.

// taskGrace is how long a tools/call of a Long tool waits for its task to
// end before it answers with the task: a short call (a one-page scan) is
// answered with its result, a long one (a 40-page PDF) with a task.
const taskGrace = time.Second

// headerTaskParam carries, from the HTTP layer to the middleware, the
// "task" parameter of a 2025-11-25 tools/call ({"ttl": ms} as JSON), which
// the go-sdk does not decode. Set by tasks_http.go and only there: a
// client's own is removed.
const headerTaskParam = "X-Agentura-Task"

// Keys of task-related _meta.
const (
	// metaRelatedTask names the task a 2025-11-25 message belongs to.
	metaRelatedTask = "io.modelcontextprotocol/related-task"
	// metaImmediateResponse is what a 2025-11-25 host may show the model
	// while the task runs.
	metaImmediateResponse = "io.modelcontextprotocol/model-immediate-response"
)

// taskParams are the params of every tasks/* request.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string         `json:"taskId,omitempty"`
	Cursor         string         `json:"cursor,omitempty"`
	InputResponses map[string]any `json:"inputResponses,omitempty"`
}

// wireResult is a result of a shape the go-sdk does not know: its fields
// as given, and _meta.
type wireResult struct {
	mcp.ResultBase
	fields map[string]any
}

// MarshalJSON writes the fields and _meta.
func (r *wireResult) MarshalJSON() ([]byte, error) {
	m := maps.Clone(r.fields)
	if m == nil {
		m = map[string]any{}
	}
	if len(r.Meta) > 0 {
		m["_meta"] = r.Meta
	}
	return json.Marshal(m)
}

// patchedResult is a go-sdk result with fields added to its JSON.
type patchedResult struct {
	mcp.Result
	patch func(map[string]any)
}

// MarshalJSON writes the result with the patch applied.
func (r *patchedResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	r.patch(m)
	return json.Marshal(m)
}

// taskCaller is who asks about a task, as the middleware read it from the
// request for the tasks/* handlers.
type taskCaller struct {
	owner    string
	scope    string // an anonymous caller's scope, for tasks/list
	modern   bool   // 2026-07-28 (else 2025-11-25)
	declared bool   // 2026-07-28: the request declares the Tasks extension
}

type taskCallerKey struct{}

// serveTasks serves MCP tasks when the store keeps them.
func (s *Server) serveTasks() {
	if s.Tasks == nil {
		return
	}
	for method, h := range map[string]func(context.Context, taskCaller, *taskParams) (mcp.Result, error){
		"tasks/get":    s.taskGet,
		"tasks/cancel": s.taskCancel,
		"tasks/update": s.taskUpdate,
		"tasks/result": s.taskResult,
		"tasks/list":   s.taskList,
	} {
		err := mcp.AddReceivingCustomMethod(s.mcp, method, func(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (mcp.Result, error) {
			c, _ := ctx.Value(taskCallerKey{}).(taskCaller)
			if c.owner == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task's caller is unknown"}
			}
			if c.modern && !c.declared {
				return nil, missingTasksCapability()
			}
			p = cmp.Or(p, &taskParams{})
			if method != "tasks/list" && p.TaskID == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": taskId is missing: send the taskId the tools/call answer (or tasks/list) gave"}
			}
			return h(ctx, c, p)
		})
		if err != nil {
			panic(fmt.Sprintf("agentcore: serve %s: %v", method, err)) // a name clash is a programming error
		}
	}
	s.mcp.AddReceivingMiddleware(s.taskMiddleware)
}

// taskMiddleware answers tools/call with a task when the call is one,
// adds the declarations of 2025-11-25, and tells the tasks/* handlers who
// asks.
func (s *Server) taskMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch {
		case method == "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok {
				if res, err, handled := s.callAsTask(ctx, r); handled {
					return res, err
				}
			}
		case method == "initialize":
			res, err := next(ctx, method, req)
			if ir, ok := res.(*mcp.InitializeResult); ok && err == nil && ir.ProtocolVersion == revisionTasks {
				return &patchedResult{Result: res, patch: declareTasks2025}, nil
			}
			return res, err
		case method == "tools/list":
			res, err := next(ctx, method, req)
			if err == nil && readMeta(req).revision == "" && legacyRevision(req) == revisionTasks {
				return &patchedResult{Result: res, patch: s.declareTaskSupport}, nil
			}
			return res, err
		case strings.HasPrefix(method, "tasks/"):
			m := readMeta(req)
			c := taskCaller{owner: ownerOfExtra(req.GetExtra()), modern: m.revision != "", declared: m.tasks}
			if !s.Callers.Authenticated() {
				scope, err := s.listScope(req, m)
				if err != nil {
					return nil, err
				}
				c.scope = scope
			}
			ctx = context.WithValue(ctx, taskCallerKey{}, c)
		}
		return next(ctx, method, req)
	}
}

// declareTasks2025 adds the tasks capability of 2025-11-25 to an
// initialize result: tools/call may be a task, tasks/cancel and tasks/list
// are served. (The Tasks extension is for 2026-07-28 alone.)
func declareTasks2025(m map[string]any) {
	caps, _ := m["capabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
		m["capabilities"] = caps
	}
	if exts, ok := caps["extensions"].(map[string]any); ok {
		delete(exts, extTasks)
		if len(exts) == 0 {
			delete(caps, "extensions")
		}
	}
	caps["tasks"] = map[string]any{
		"list":     map[string]any{},
		"cancel":   map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
	}
}

// declareTaskSupport marks the Long tools of a 2025-11-25 tools/list
// result execution.taskSupport "optional"; the others stay "forbidden"
// (absent).
func (s *Server) declareTaskSupport(m map[string]any) {
	tools, _ := m["tools"].([]any)
	for _, t := range tools {
		tool, _ := t.(map[string]any)
		name, _ := tool["name"].(string)
		if def, ok := s.Runner.Tool(name); ok && def.Long {
			tool["execution"] = map[string]any{"taskSupport": "optional"}
		}
	}
}

// missingTasksCapability is the error of a 2026-07-28 request that needs
// the Tasks extension its client did not declare.
func missingTasksCapability() error {
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "Missing required client capability: declare the " +
		extTasks + " extension in _meta[\"" + mcp.MetaKeyClientCapabilities + "\"].extensions",
		Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + extTasks + `":{}}}}`)}
}

// callAsTask answers a tools/call with a task when it is one to run as a
// task; handled is false when the call runs as usual.
func (s *Server) callAsTask(ctx context.Context, r *mcp.CallToolRequest) (_ mcp.Result, _ error, handled bool) {
	if r.Params == nil {
		return nil, nil, false
	}
	def, ok := s.Runner.Tool(r.Params.Name)
	if !ok {
		return nil, nil, false
	}
	meta := readMeta(r)
	legacy := meta.revision == ""
	var ttl time.Duration
	if legacy {
		param := ""
		if r.Extra != nil {
			param = r.Extra.Header.Get(headerTaskParam)
		}
		if param == "" || legacyRevision(r) != revisionTasks {
			return nil, nil, false
		}
		if !def.Long {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf(
				"tool %q does not run as a task (its execution.taskSupport is \"forbidden\"); call it without \"task\"", def.Name)}, true
		}
		var tp struct {
			TTL *int64 `json:"ttl"`
		}
		if json.Unmarshal([]byte(param), &tp) == nil && tp.TTL != nil && *tp.TTL > 0 {
			ttl = time.Duration(*tp.TTL) * time.Millisecond
		}
	} else if !meta.tasks || !def.Long {
		return nil, nil, false
	}
	scope, handle, err := s.callScope(r, meta)
	if err != nil {
		return nil, err, true
	}
	toolError := func(err error) (mcp.Result, error, bool) {
		if legacy {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}, true
		}
		out := &mcp.CallToolResult{}
		out.SetError(err)
		if handle != "" {
			out.Meta = mcp.Meta{transfer.MetaOwner: handle}
		}
		return out, nil, true
	}
	if !legacy {
		// A call that cannot run is told so at once, not through a task.
		if err := s.Runner.Check(def.Name, r.Params.Arguments); err != nil {
			return toolError(err)
		}
	}
	c := tasks.Call{Tool: def.Name, Owner: ownerOfExtra(r.Extra), Scope: scope, Handle: handle, Args: r.Params.Arguments, TTL: ttl}
	if r.Extra != nil {
		c.RequestID = r.Extra.Header.Get("X-Request-Id")
		c.Staged = s.Inline.Claim(r.Extra.Header) // read by the task, after the answer
	}
	if token := r.Params.GetProgressToken(); token != nil && r.Session != nil {
		c.Progress = s.progressTo(context.WithoutCancel(ctx), r.Session, token, def.Name, "task progress not sent to its request")
	}
	c.Changed = s.taskListeners.changed
	if legacy {
		c.Changed = s.taskStatusNotifier(r)
	}
	t, ended, err := s.Tasks.Start(ctx, c)
	if err != nil {
		if _, ok := errors.AsType[*quota.Error](err); ok {
			return toolError(fmt.Errorf("%s was not started: %w", def.Name, err))
		}
		if _, ok := errors.AsType[tasks.TooManyError](err); ok {
			return toolError(err)
		}
		return toolError(fmt.Errorf("%s could not be started as a task: %w", def.Name, err))
	}
	if !legacy {
		select {
		case <-ended:
		case <-time.After(taskGrace):
		case <-ctx.Done():
		}
		if done, err := s.Tasks.Read(context.WithoutCancel(ctx), c.Owner, t.ID); err == nil && done.Status == tasks.Completed {
			if res, err := s.endedResult(ctx, done); err == nil {
				s.Tasks.Forget(context.WithoutCancel(ctx), done)
				return res, nil, true
			}
		} else if err == nil {
			t = done
		}
	}
	res := &wireResult{}
	if legacy {
		res.fields = map[string]any{"task": wireTask(t, false)}
		res.Meta = mcp.Meta{metaImmediateResponse: fmt.Sprintf("%s is running as task %s; its result will follow.", def.Name, t.ID)}
	} else {
		res.fields = wireTask(t, true)
		res.fields["resultType"] = "task"
	}
	if handle != "" {
		setMeta(&res.Meta, transfer.MetaOwner, handle)
	}
	return res, nil, true
}

// wireTask is t as a Task of 2026-07-28 (modern) or 2025-11-25, where a
// tool result with isError is a failed task.
func wireTask(t *tasks.Task, modern bool) map[string]any {
	ttl, poll := "ttl", "pollInterval"
	if modern {
		ttl, poll = "ttlMs", "pollIntervalMs"
	}
	m := map[string]any{
		"taskId":        t.ID,
		"status":        t.Status,
		"createdAt":     t.Created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": t.Updated.UTC().Format(time.RFC3339Nano),
		ttl:             t.TTL.Milliseconds(),
	}
	if t.Message != "" {
		m["statusMessage"] = t.Message
	}
	if !modern && t.Status == tasks.Completed && t.Result != nil && t.Result.IsError {
		m["status"] = tasks.Failed
	}
	if !t.Ended() {
		// Often at first, less as the task goes on: a tenth of its age,
		// between 0.5 and 5 s.
		m[poll] = min(max(time.Since(t.Created)/10, 500*time.Millisecond), 5*time.Second).Milliseconds()
	}
	return m
}

// detailed2026 is the DetailedTask of 2026-07-28: the Task with, once
// ended, its result or error; _meta holds the last progress report.
func (s *Server) detailed2026(ctx context.Context, t *tasks.Task) (map[string]any, mcp.Meta, error) {
	m := wireTask(t, true)
	switch {
	case t.Status == tasks.Completed:
		res, err := s.endedResult(ctx, t)
		if err != nil {
			return nil, nil, err
		}
		m["result"] = res
	case t.Status == tasks.Failed && t.Error != nil:
		m["error"] = t.Error
	}
	return m, progressMeta(t), nil
}

// progressMeta is the _meta of a running task with progress.
func progressMeta(t *tasks.Task) mcp.Meta {
	if t.Progress == nil || t.Ended() {
		return nil
	}
	p := map[string]any{"progress": t.Progress.Done}
	if t.Progress.Total > 0 {
		p["total"] = t.Progress.Total
	}
	return mcp.Meta{transfer.MetaTaskProgress: p}
}

// taskLookupError is the JSON-RPC error of a task that cannot be read:
// -32602 for one that does not exist (or no longer), else the agent's own
// failure in words and a reason code, its details in the log alone.
func (s *Server) taskLookupError(ctx context.Context, err error) error {
	if errors.Is(err, tasks.ErrNotFound) || errors.Is(err, tasks.ErrExpired) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: " + err.Error()}
	}
	return s.failure(ctx, "retrieve the task", err)
}

// taskGet answers tasks/get.
func (s *Server) taskGet(ctx context.Context, c taskCaller, p *taskParams) (mcp.Result, error) {
	t, err := s.Tasks.Get(ctx, c.owner, p.TaskID)
	if err != nil {
		return nil, s.taskLookupError(ctx, err)
	}
	tasks.Link(ctx, t.Trace)
	if !c.modern {
		return &wireResult{fields: wireTask(t, false)}, nil
	}
	fields, meta, err := s.detailed2026(ctx, t)
	if err != nil {
		return nil, s.taskLookupError(ctx, err)
	}
	fields["resultType"] = "complete"
	return &wireResult{ResultBase: mcp.ResultBase{Meta: meta}, fields: fields}, nil
}

// taskCancel answers tasks/cancel: an acknowledgement on 2026-07-28, the
// task on 2025-11-25 (which refuses to cancel a task that ended).
func (s *Server) taskCancel(ctx context.Context, c taskCaller, p *taskParams) (mcp.Result, error) {
	if !c.modern {
		if t, err := s.Tasks.Get(ctx, c.owner, p.TaskID); err != nil {
			return nil, s.taskLookupError(ctx, err)
		} else if t.Ended() {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
				"Cannot cancel task: already in terminal status '%s'", wireTask(t, false)["status"])}
		}
	}
	t, err := s.Tasks.Cancel(ctx, c.owner, p.TaskID)
	if err != nil {
		return nil, s.taskLookupError(ctx, err)
	}
	tasks.Link(ctx, t.Trace)
	if !c.modern {
		return &wireResult{fields: wireTask(t, false)}, nil
	}
	return &wireResult{fields: map[string]any{"resultType": "complete"}}, nil
}

// taskUpdate answers tasks/update (2026-07-28): no tool of this agent asks
// for input while it runs, so there is never an input outstanding and the
// responses are ignored, as the extension says.
func (s *Server) taskUpdate(ctx context.Context, c taskCaller, p *taskParams) (mcp.Result, error) {
	if !c.modern {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tasks/update is a method of the Tasks extension of MCP 2026-07-28"}
	}
	t, err := s.Tasks.Get(ctx, c.owner, p.TaskID)
	if err != nil {
		return nil, s.taskLookupError(ctx, err)
	}
	tasks.Link(ctx, t.Trace)
	return &wireResult{fields: map[string]any{"resultType": "complete"}}, nil
}

// taskResult answers tasks/result (2025-11-25): it waits for the task to
// end, then answers what the call would have answered.
func (s *Server) taskResult(ctx context.Context, c taskCaller, p *taskParams) (mcp.Result, error) {
	if c.modern {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tasks/result is gone in MCP 2026-07-28: tasks/get carries the result of an ended task"}
	}
	for linked := false; ; linked = true {
		t, err := s.Tasks.Get(ctx, c.owner, p.TaskID)
		if err != nil {
			return nil, s.taskLookupError(ctx, err)
		}
		if !linked {
			tasks.Link(ctx, t.Trace) // once, though it reads the task until it ends
		}
		if t.Ended() {
			switch {
			case t.Status == tasks.Completed:
				res, err := s.endedResult(ctx, t)
				if err != nil {
					return nil, s.taskLookupError(ctx, err)
				}
				setMeta(&res.Meta, metaRelatedTask, map[string]any{"taskId": t.ID})
				return res, nil
			case t.Error != nil:
				return nil, &jsonrpc.Error{Code: t.Error.Code, Message: t.Error.Message}
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task was cancelled: it has no result"}
		}
		// Woken by the end of a task running here, else by the next poll.
		var poll <-chan time.Time
		ended := s.Tasks.EndedHere(t.ID)
		if ended == nil {
			poll = time.After(tasks.CancelPoll)
		}
		select {
		case <-ended:
		case <-poll:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// taskListPage is how many tasks one tasks/list page holds.
const taskListPage = 100

// taskList answers tasks/list (2025-11-25): the caller's tasks, newest
// first; an anonymous caller's are those of its session or owner handle.
func (s *Server) taskList(ctx context.Context, c taskCaller, p *taskParams) (mcp.Result, error) {
	if c.modern {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tasks/list is gone in MCP 2026-07-28: keep the ids of your tasks"}
	}
	start := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil || n < 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor: send the nextCursor of the previous page"}
		}
		start = n
	}
	tasks := []map[string]any{}
	var next string
	if c.owner != calls.AnonymousOwner || c.scope != "" {
		all, err := s.Tasks.List(ctx, c.owner, c.scope)
		if err != nil {
			return nil, s.failure(ctx, "list your tasks", err)
		}
		for i := start; i < len(all) && i < start+taskListPage; i++ {
			tasks = append(tasks, wireTask(all[i], false))
		}
		if start+taskListPage < len(all) {
			next = strconv.Itoa(start + taskListPage)
		}
	}
	fields := map[string]any{"tasks": tasks}
	if next != "" {
		fields["nextCursor"] = next
	}
	return &wireResult{fields: fields}, nil
}

// endedResult is the CallToolResult of an ended task, its files' URLs
// signed now.
func (s *Server) endedResult(ctx context.Context, t *tasks.Task) (*mcp.CallToolResult, error) {
	k := t.Result
	if k == nil {
		return nil, fmt.Errorf("task %s has no result", t.ID)
	}
	var out *mcp.CallToolResult
	if k.IsError {
		out = &mcp.CallToolResult{}
		out.SetError(errors.New(k.Text))
	} else {
		res := &calls.Result{Text: k.Text, Data: k.Data, Stored: k.Files, Images: k.Images}
		for _, f := range k.Files {
			o, err := s.Handout(f)
			if err != nil {
				return nil, err
			}
			res.Files, res.Links = append(res.Files, o.File), append(res.Links, o.Links)
		}
		out = s.Render(ctx, res)
	}
	if t.Handle != "" {
		out.Meta = mcp.Meta{transfer.MetaOwner: t.Handle}
	}
	return out, nil
}
