package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
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
//     once, as any call's, and is kept for the host's later reads.

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

// agentTasks prepares the client of an agent reached over HTTP for tasks:
// the extension declared on every request, the task read from answers,
// tasks/get and tasks/cancel sendable.
func agentTasks(opts *mcp.ClientOptions, hc *http.Client) *http.Client {
	opts.Capabilities = client.TaskCapabilities(opts.Capabilities)
	return client.WithTasks(hc)
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
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if cerr := mw.CancelTask(cctx, s, t.ID); cerr != nil {
			g.log.Warn("the agent's task of a call the host gave up was not cancelled", "agent", r.agent.label(), "task", t.ID, "err", cerr)
		}
	}
	return res, err
}

// passedTask is a task of an agent passed through to the host.
type passedTask struct {
	route route
	id    string              // the agent's
	done  *mcp.CallToolResult // the finished result, once read
	once  sync.Mutex          // one read fetches the files
}

// hostTasks are the tasks passed through, by the host's id.
type hostTasks struct {
	mu    sync.Mutex
	tasks map[string]*passedTask
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
			g.hostTasks.mu.Lock()
			pt := g.hostTasks.tasks[p.TaskID]
			g.hostTasks.mu.Unlock()
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
// makes goes back to the host as a task of the gateway's.
func (g *Gateway) passTask(ctx context.Context, req *mcp.CallToolRequest, r route) (mcp.Result, error) {
	res, t, err := g.run(ctx, req, r, true)
	if err != nil || t == nil {
		return res, err
	}
	idx := 0
	for i, a := range g.agents {
		if a == r.agent {
			idx = i
		}
	}
	id := fmt.Sprintf("%d.%s", idx, t.ID)
	g.hostTasks.mu.Lock()
	if g.hostTasks.tasks == nil {
		g.hostTasks.tasks = map[string]*passedTask{}
	}
	g.hostTasks.tasks[id] = &passedTask{route: r, id: t.ID}
	g.hostTasks.mu.Unlock()
	fields := hostTask(id, t)
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
	var id string
	g.hostTasks.mu.Lock()
	for k, v := range g.hostTasks.tasks {
		if v == pt {
			id = k
		}
	}
	g.hostTasks.mu.Unlock()
	if pt.done != nil {
		return &wireResult{fields: map[string]any{"resultType": "complete", "taskId": id, "status": client.TaskCompleted, "result": pt.done}}, nil
	}
	mw, err := g.middleware(pt.route, nil)
	if err != nil {
		return nil, err
	}
	s, err := g.session(ctx, pt.route.agent)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the agent is not reachable: " + scrub(err.Error())}
	}
	t, err := mw.GetTask(ctx, s, pt.id)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: " + scrub(err.Error())}
	}
	fields := hostTask(id, t)
	fields["resultType"] = "complete"
	if t.Status == client.TaskCompleted && t.Result != nil {
		g.finish(ctx, t.Result, pt.route.tool.Name)
		pt.done = t.Result
		fields["result"] = t.Result
	}
	res := &wireResult{fields: fields}
	if t.Total > 0 {
		res.Meta = mcp.Meta{"agentura/progress": map[string]any{"progress": t.Progress, "total": t.Total}}
	}
	return res, nil
}

// hostTaskCancel forwards tasks/cancel.
func (g *Gateway) hostTaskCancel(ctx context.Context, pt *passedTask) (mcp.Result, error) {
	mw, err := g.middleware(pt.route, nil)
	if err != nil {
		return nil, err
	}
	s, err := g.session(ctx, pt.route.agent)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the agent is not reachable: " + scrub(err.Error())}
	}
	if err := mw.CancelTask(ctx, s, pt.id); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: scrub(err.Error())}
	}
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
