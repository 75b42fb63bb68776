package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer"
)

// MCP tasks through the gateway. Towards an agent over HTTP the gateway
// declares the Tasks extension (2026-07-28), so a long call comes back as
// a task instead of a request held open for minutes. Towards the host:
//
//   - a host that does not declare the extension (most chat hosts, every
//     2025-11-25 one) gets what it always got: the gateway waits for the
//     task, telling the host its progress, and answers with the result;
//     should the host cancel its call, the agent's task is cancelled;
//   - a host that declares it gets the task passed through, under an id of
//     the gateway's (the agent's index and the agent's id), and follows it
//     with tasks/get and tasks/cancel, which the gateway forwards; the
//     result of a completed task has its files fetched and saved in Out
//     once, as any call's, and is kept for the host's later reads, in a
//     bounded map (hostTasks) that is only a cache: an id of the gateway's
//     form is resolved again after a restart.

// extTasks is the Tasks extension.
const extTasks = client.ExtTasks

// serverCapabilities are the gateway's: log messages (the go-sdk's
// default), the Tasks and MCP Apps extensions; tools and resources are
// added by the go-sdk.
func serverCapabilities() *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
	c.AddExtension(extTasks, nil)
	// MCP Apps: the agents' views, forwarded (apps.go).
	c.AddExtension(transfer.AppsExtension, map[string]any{"mimeTypes": []string{transfer.AppMIMEType}})
	return c
}

// task is the progress hook of a followed task: its status message (and
// figures) as a progress notification to the host.
func (p *callProgress) task(t *client.Task) {
	msg := "task " + t.Status
	if t.StatusMessage != "" {
		msg = scrub(t.StatusMessage)
	}
	if t.Total > 0 {
		msg = fmt.Sprintf("%s (%g of %g)", msg, t.Progress, t.Total)
	}
	p.send(msg, true)
}

// waitTask waits for the task an agent made of a call; a host that gives
// up its call (its context ends) cancels the task.
func (g *Gateway) waitTask(ctx context.Context, mw *client.Middleware, r route, t *client.Task) (*mcp.CallToolResult, error) {
	s, err := g.session(ctx, r.agent)
	if err != nil {
		return nil, err
	}
	res, err := mw.WaitTask(ctx, s, t.ID)
	if ctx.Err() != nil {
		_ = g.dropTask(ctx, mw, s, r.agent, t.ID, "the host gave up its call") // logged
	}
	return res, err
}

// dropTask cancels task id of agent a that no host follows any more; why
// says so in the log, should the agent not agree (the error returned).
func (g *Gateway) dropTask(ctx context.Context, mw *client.Middleware, s *mcp.ClientSession, a *agent, id, why string) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := mw.CancelTask(cctx, s, id)
	if err != nil {
		g.log.Warn("an agent's task no host follows was not cancelled", "why", why, "agent", a.label(), "task", id, "err", err)
	}
	return err
}

// maxHostTasks is how many passed tasks the gateway keeps by default
// (hostTasks.max).
const maxHostTasks = 1000

// resumedTool is the tool name of a passed task made anew from its id
// (hostTask), whose tool the gateway no longer knows: inline pictures of
// its result are saved as task-image-1.png and so on.
const resumedTool = "task"

// passedTask is a task of an agent passed through to the host.
type passedTask struct {
	agent  *agent
	tool   string // the agent's tool, or resumedTool
	id     string // the agent's
	hostID string // the host's: hostTaskID

	// Under hostTasks.mu:
	added   time.Time // when the gateway took it on
	expires time.Time // when the agent forgets it; zero: never (TTL 0)
	ended   bool      // the agent said it ended
	kept    bool      // it is in hostTasks.tasks

	once sync.Mutex          // one read at a time: one fetches the files
	done *mcp.CallToolResult // the finished result, once read
}

// expired reports whether the agent has forgotten pt's task by now.
func (pt *passedTask) expired(now time.Time) bool {
	return !pt.expires.IsZero() && !now.Before(pt.expires)
}

// hostTasks are the tasks passed through, by the host's id: bounded, so a
// host that never comes back for its tasks costs the gateway nothing
// lasting. An entry goes when its task's TTL passed (the agent forgot the
// task too) or, the map full, when it is the ended entry taken on longest
// ago. An entry is only a cache: an id of the gateway's form is resolved
// anew when it has gone (hostTask), after a restart too.
type hostTasks struct {
	mu    sync.Mutex
	tasks map[string]*passedTask
	max   int // the most entries; 0: maxHostTasks
}

// errHostTasksFull is the error of a task the gateway cannot take on: it
// keeps the most entries it may, none of an ended task.
type errHostTasksFull struct{ limit int }

func (e errHostTasksFull) Error() string {
	return fmt.Sprintf("the gateway follows %d tasks for its hosts already, the most it keeps, and none of them has ended; "+
		"follow tasks to their end with tasks/get, or cancel those you no longer need with tasks/cancel, and call again", e.limit)
}

// put keeps pt, making room: entries past their TTL go, then, if the map
// is full, the ended entry taken on longest ago; when every entry is of a
// task not known to have ended it fails with errHostTasksFull. Another
// entry of the same id (one past its TTL, which get no longer serves, or
// one made anew at the same time) is replaced: pt is the one just read.
func (h *hostTasks) put(pt *passedTask, now time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tasks == nil {
		h.tasks = map[string]*passedTask{}
	}
	for id, p := range h.tasks { // the entries past their TTL go
		if p.expired(now) {
			delete(h.tasks, id)
			p.kept = false
		}
	}
	if old, ok := h.tasks[pt.hostID]; ok {
		old.kept = false
	} else if limit := cmp.Or(h.max, maxHostTasks); len(h.tasks) >= limit {
		var oldest *passedTask
		for _, p := range h.tasks {
			if p.ended && (oldest == nil || p.added.Before(oldest.added)) {
				oldest = p
			}
		}
		if oldest == nil {
			return errHostTasksFull{limit}
		}
		delete(h.tasks, oldest.hostID)
		oldest.kept = false
	}
	h.tasks[pt.hostID] = pt
	pt.kept = true
	return nil
}

// get is the entry of host id id, nil if none (or past its TTL).
func (h *hostTasks) get(id string, now time.Time) *passedTask {
	h.mu.Lock()
	defer h.mu.Unlock()
	pt := h.tasks[id]
	if pt == nil || pt.expired(now) {
		return nil
	}
	return pt
}

// saw records what the agent said of pt's task: whether it ended, when it
// expires. An entry made anew from its id is kept from here on, if there
// is room; else it is served unkept. A task whose TTL has passed by the
// gateway's clock though the agent still has it (the agent's clock runs
// behind) is kept one TTL from now, not dropped at once and read, its
// files saved, anew on every tasks/get.
func (h *hostTasks) saw(pt *passedTask, t *client.Task, now time.Time) {
	h.mu.Lock()
	pt.ended = pt.ended || t.Ended() // an ended task does not run again
	pt.expires = taskExpiry(t, now)
	if pt.expired(now) {
		pt.expires = now.Add(t.TTL)
	}
	kept := pt.kept
	h.mu.Unlock()
	if !kept {
		_ = h.put(pt, now) // full of running tasks: this one is read from the agent each time
	}
}

// end records that pt's task ended, or is to end (the agent took a
// tasks/cancel): its entry may make room for another.
func (h *hostTasks) end(pt *passedTask) {
	h.mu.Lock()
	defer h.mu.Unlock()
	pt.ended = true
}

// taskExpiry is when the agent forgets t (its TTL counts from its
// creation); zero for a task kept without limit.
func taskExpiry(t *client.Task, now time.Time) time.Time {
	if t.TTL <= 0 {
		return time.Time{}
	}
	if t.CreatedAt.IsZero() {
		return now.Add(t.TTL)
	}
	return t.CreatedAt.Add(t.TTL)
}

// hostTaskID is the host's id of task id of the agent at index idx of
// the configuration: stable across the gateway's restarts, so long as the
// configuration lists the agents in the same order.
func hostTaskID(idx int, id string) string {
	return strconv.Itoa(idx) + "." + id
}

// hostTask is the passed task the host calls id: the entry kept, or, for
// an id of the gateway's form it does not keep (a task passed before the
// gateway restarted, or one whose entry made room for others), one made
// anew, so that a host following a task across a restart still reaches
// the agent's task (the agent says whether it has it). nil: not an id of
// the gateway's.
func (g *Gateway) hostTask(id string) *passedTask {
	now := time.Now()
	if pt := g.hostTasks.get(id, now); pt != nil {
		return pt
	}
	idx, agentID, ok := strings.Cut(id, ".")
	n, err := strconv.Atoi(idx)
	if !ok || err != nil || strconv.Itoa(n) != idx || n < 0 || n >= len(g.agents) || agentID == "" {
		return nil
	}
	return &passedTask{agent: g.agents[n], tool: resumedTool, id: agentID, hostID: id, added: now}
}

// serveTasks lets hosts that support tasks have them.
func (g *Gateway) serveTasks() {
	g.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params != nil && declaresTasks(r.Params.Meta) {
				g.mu.Lock()
				rt, routed := g.routes[r.Params.Name]
				g.mu.Unlock()
				if routed {
					return g.passTask(ctx, r, rt)
				}
			}
			if strings.HasPrefix(method, "tasks/") && !declaresTasks(metaOf(req)) {
				return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "Missing required client capability: declare " + extTasks,
					Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + extTasks + `":{}}}}`)}
			}
			return next(ctx, method, req)
		}
	})
	for method, h := range map[string]func(context.Context, *passedTask) (mcp.Result, error){
		"tasks/get":    g.hostTaskGet,
		"tasks/cancel": g.hostTaskCancel,
		"tasks/update": func(context.Context, *passedTask) (mcp.Result, error) {
			return &wireResult{fields: map[string]any{"resultType": "complete"}}, nil
		},
	} {
		err := mcp.AddReceivingCustomMethod(g.server, method, func(ctx context.Context, _ *mcp.ServerSession, p *hostTaskParams) (mcp.Result, error) {
			pt := g.hostTask(p.TaskID)
			if pt == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"}
			}
			return h(ctx, pt)
		})
		if err != nil {
			panic(fmt.Sprintf("gateway: serve %s: %v", method, err)) // a name clash is a programming error
		}
	}
}

// metaOf is a request's _meta; nil for a request without params.
func metaOf(req mcp.Request) map[string]any {
	p := req.GetParams()
	if v := reflect.ValueOf(p); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return nil
	}
	return p.GetMeta()
}

// declaresTasks reports whether a request's _meta declares the Tasks
// extension among its client capabilities.
func declaresTasks(meta map[string]any) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	_, ok := exts[extTasks]
	return ok
}

// passTask forwards a call of a host that supports tasks: a task the agent
// makes goes back to the host as a task of the gateway's. A task the
// gateway has no room to keep is cancelled at the agent, and the call is
// a tool error that says why.
func (g *Gateway) passTask(ctx context.Context, req *mcp.CallToolRequest, r route) (mcp.Result, error) {
	res, t, err := g.run(ctx, req, r, true)
	if err != nil || t == nil {
		return res, err
	}
	now := time.Now()
	pt := &passedTask{agent: r.agent, tool: r.tool.Name, id: t.ID, hostID: hostTaskID(slices.Index(g.agents, r.agent), t.ID),
		added: now, expires: taskExpiry(t, now), ended: t.Ended()}
	if err := g.hostTasks.put(pt, now); err != nil {
		outcome := "The agent's task was cancelled."
		mw, cerr := g.middleware(r.agent, nil)
		var s *mcp.ClientSession
		if cerr == nil {
			s, cerr = g.session(ctx, r.agent)
		}
		if cerr == nil {
			cerr = g.dropTask(ctx, mw, s, r.agent, t.ID, "the gateway keeps no more tasks")
		}
		if cerr != nil {
			outcome = fmt.Sprintf("The agent's task %s could not be cancelled (%s); it runs to its end unseen.", t.ID, scrub(cerr.Error()))
		}
		return toolError(fmt.Sprintf("%s: %v. %s", req.Params.Name, err, outcome)), nil
	}
	fields := hostTask(pt.hostID, t)
	fields["resultType"] = "task"
	return &wireResult{fields: fields}, nil
}

// hostTask is an agent's task as the host sees it, under its id.
func hostTask(id string, t *client.Task) map[string]any {
	m := map[string]any{"taskId": id, "status": t.Status, "ttlMs": t.TTL.Milliseconds()}
	if t.StatusMessage != "" {
		m["statusMessage"] = scrub(t.StatusMessage)
	}
	if !t.CreatedAt.IsZero() {
		m["createdAt"] = t.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	if !t.LastUpdatedAt.IsZero() {
		m["lastUpdatedAt"] = t.LastUpdatedAt.UTC().Format(time.RFC3339Nano)
	}
	if t.PollInterval > 0 {
		m["pollIntervalMs"] = t.PollInterval.Milliseconds()
	}
	if t.Err != nil {
		m["error"] = map[string]any{"code": t.Err.Code, "message": scrub(t.Err.Message)}
	}
	return m
}

// hostTaskGet forwards tasks/get; a completed task's files are fetched and
// saved once, and its finished result kept for the host's later reads.
func (g *Gateway) hostTaskGet(ctx context.Context, pt *passedTask) (mcp.Result, error) {
	pt.once.Lock()
	defer pt.once.Unlock()
	id := pt.hostID
	if pt.done != nil {
		return &wireResult{fields: map[string]any{"resultType": "complete", "taskId": id, "status": client.TaskCompleted, "result": pt.done}}, nil
	}
	mw, err := g.middleware(pt.agent, nil)
	if err != nil {
		return nil, err
	}
	s, err := g.session(ctx, pt.agent)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the agent is not reachable: " + scrub(err.Error())}
	}
	t, err := mw.GetTask(ctx, s, pt.id)
	if err != nil {
		if je, refused := errors.AsType[*jsonrpc.Error](err); refused && je.Code == jsonrpc.CodeInvalidParams {
			// The agent has no such task (any more): nothing to wait for.
			// (A transport that failed or is closing is an error of
			// another code: the task may still run.)
			g.hostTasks.end(pt)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: " + scrub(err.Error())}
	}
	g.hostTasks.saw(pt, t, time.Now())
	fields := hostTask(id, t)
	fields["resultType"] = "complete"
	if t.Status == client.TaskCompleted && t.Result != nil {
		g.finish(ctx, t.Result, pt.tool)
		pt.done = t.Result
		fields["result"] = t.Result
	}
	res := &wireResult{fields: fields}
	if t.Total > 0 {
		res.Meta = mcp.Meta{"agentura/progress": map[string]any{"progress": t.Progress, "total": t.Total}}
	}
	return res, nil
}

// hostTaskCancel forwards tasks/cancel; a task the agent agreed to cancel
// counts as ended, so its entry makes room for the host's next task.
func (g *Gateway) hostTaskCancel(ctx context.Context, pt *passedTask) (mcp.Result, error) {
	mw, err := g.middleware(pt.agent, nil)
	if err != nil {
		return nil, err
	}
	s, err := g.session(ctx, pt.agent)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the agent is not reachable: " + scrub(err.Error())}
	}
	if err := mw.CancelTask(ctx, s, pt.id); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: scrub(err.Error())}
	}
	g.hostTasks.end(pt)
	return &wireResult{fields: map[string]any{"resultType": "complete"}}, nil
}

// hostTaskParams are the params of the host's tasks/* requests.
type hostTaskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
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
	if len(r.Meta) > 0 {
		m["_meta"] = r.Meta
	}
	return json.Marshal(m)
}
