package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/ops"
	"github.com/google/jsonschema-go/jsonschema"
)

// Tool describes a tool for registration.
type Tool struct {
	// Name is the tool's name, e.g. "ocr_document".
	Name string
	// Title is an optional human title.
	Title string
	// Description tells the model what the tool does and when to use it.
	Description string
	// ReadOnly marks a tool that changes nothing but its own outputs
	// (MCP annotation readOnlyHint).
	ReadOnly bool
	// Destructive marks a tool that may delete or overwrite something
	// outside its own new outputs (destructiveHint). Published as false
	// unless set: an agentura tool's outputs are new files.
	Destructive bool
	// Idempotent marks a tool that, called again with the same arguments,
	// has no further effect (idempotentHint).
	Idempotent bool
	// OpenWorld marks a tool that reaches outside systems beyond fetching
	// its inputs (openWorldHint). Published as false unless set.
	OpenWorld bool
	// InputTypes optionally lists the MIME types of the files the tool takes
	// ("image/png", "application/pdf"); the A2A agent card shows them as the
	// skill's input modes. Default: any ("*/*") for a tool with files.
	InputTypes []string
	// OutputTypes optionally lists the MIME types of the files the tool
	// produces, for the skill's output modes. Default (nil): any ("*/*"),
	// read-only or not; an empty, non-nil list says the tool hands out no
	// files.
	OutputTypes []string
	// Examples optionally lists example requests for the agent card. Default:
	// one derived from the input schema.
	Examples []string
	// Long marks a tool whose calls may run for minutes (a 200-page OCR, a
	// large document): over MCP it runs as a durable task whenever the
	// client supports tasks (tasks_wire.go), polled on any replica and
	// surviving the client's disconnection. A call that ends within about
	// a second is answered directly all the same.
	Long bool
	// View is the URI of the MCP Apps view (a ui:// resource added with
	// AddView) a host shows this tool's results in. Default: agentura's
	// file view (transfer.FilesViewURI) for a tool that hands out files
	// (see OutputTypes), none for one that does not.
	View string
	// NoView turns the default file view off.
	NoView bool
	// Visibility optionally says who may call the tool under MCP Apps:
	// "model" (the model sees it), "app" (views may call it). Default:
	// both.
	Visibility []string

	// scope is an OAuth scope a caller needs beyond tools:call
	// (AGENT_AUTH=oauth): files:write for attach_file, whose result lets
	// its view upload.
	scope string
}

// ToolDef is a registered tool: its description, its input schema, and the
// paths of its file parameters, derived from the input type.
type ToolDef struct {
	Tool
	// InputSchema is the JSON schema of the arguments.
	InputSchema *jsonschema.Schema
	// FileParams are the JSON paths of the file parameters: "source" for a
	// top-level parameter, "sources" for an array of files,
	// "embeds[].content" for a file field of array items.
	FileParams []string
	// OutputSchema is the JSON schema of the structured content of a tool
	// added with AddTypedTool; nil for others.
	OutputSchema *jsonschema.Schema
}

// ToolFunc is a tool's implementation. It receives the decoded, validated
// arguments and the Call, through which it resolves file inputs and hands
// out file outputs. An error becomes a tool error the caller sees: make it
// say what was wrong and what to do.
type ToolFunc[In any] func(ctx context.Context, call *Call, in In) (*Result, error)

type registeredTool struct {
	def ToolDef
	run func(ctx context.Context, call *Call, raw json.RawMessage) (*Result, error)
	// check decodes and validates arguments without running the tool.
	check func(raw json.RawMessage) error
}

// AddTool registers a tool whose arguments decode into In, a struct. The
// input schema and the file parameters come from In (see InputSchema). It
// panics when In cannot describe tool arguments, as that is a programming
// error found at start-up.
func AddTool[In any](s *Service, t Tool, fn ToolFunc[In]) {
	if err := addTool(s, t, fn, nil); err != nil {
		panic(fmt.Sprintf("agentcore.AddTool %q: %v", t.Name, err))
	}
}

// addTool registers fn; out is the output schema of a typed tool, or nil.
func addTool[In any](s *Service, t Tool, fn ToolFunc[In], out *jsonschema.Schema) error {
	if t.Name == "" {
		return errors.New("tool has no name")
	}
	if fn == nil {
		return errors.New("tool has no function")
	}
	content, modes := s.resolver.Schema()
	schema, fileParams, err := inputSchema(reflect.TypeFor[In](), fileDecl{accept: t.InputTypes, maxSize: s.cfg.MaxUploadBytes, content: content, modes: modes})
	if err != nil {
		return err
	}
	dec, err := newArgDecoder(reflect.TypeFor[In](), schema)
	if err != nil {
		return err
	}
	rt := &registeredTool{
		def: ToolDef{Tool: t, InputSchema: schema, FileParams: fileParams, OutputSchema: out},
		run: func(ctx context.Context, call *Call, raw json.RawMessage) (*Result, error) {
			var in In
			if err := dec.decode(raw, &in); err != nil {
				return nil, err
			}
			return fn(ctx, call, in)
		},
		check: func(raw json.RawMessage) error {
			var in In
			return dec.decode(raw, &in)
		},
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.tools[t.Name]; dup {
		return errors.New("a tool of this name is registered already")
	}
	s.tools[t.Name] = rt
	s.toolOrder = append(s.toolOrder, t.Name)
	s.mcp.AddTool(rt.def.info())
	return nil
}

// Tools lists the registered tools in registration order.
func (s *Service) Tools() []ToolDef {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]ToolDef, 0, len(s.toolOrder))
	for _, name := range s.toolOrder {
		out = append(out, s.tools[name].def)
	}
	return out
}

// tool returns the registered tool called name.
func (s *Service) tool(name string) (ToolDef, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rt, ok := s.tools[name]
	if !ok {
		return ToolDef{}, false
	}
	return rt.def, true
}

// toolInfo is the tool name as the bindings see it.
func (s *Service) toolInfo(name string) (calls.Tool, bool) {
	def, ok := s.tool(name)
	if !ok {
		return calls.Tool{}, false
	}
	return def.info(), true
}

// toolInfos are the tools as the bindings see them, in registration order.
func (s *Service) toolInfos() []calls.Tool {
	defs := s.Tools()
	out := make([]calls.Tool, len(defs))
	for i, d := range defs {
		out[i] = d.info()
	}
	return out
}

// info is d as the bindings see it.
func (d ToolDef) info() calls.Tool {
	return calls.Tool{Name: d.Name, Title: d.Title, Description: d.Description, ReadOnly: d.ReadOnly, Destructive: d.Destructive,
		Idempotent: d.Idempotent, OpenWorld: d.OpenWorld, Long: d.Long, InputTypes: d.InputTypes, OutputTypes: d.OutputTypes,
		Examples: d.Examples, View: d.View, NoView: d.NoView, Visibility: d.Visibility, Scope: d.scope,
		InputSchema: d.InputSchema, OutputSchema: d.OutputSchema, FileParams: d.FileParams}
}

// checkArguments decodes and validates raw as the arguments of the tool
// name, without running it.
func (s *Service) checkArguments(name string, raw json.RawMessage) error {
	s.mu.RLock()
	rt, ok := s.tools[name]
	s.mu.RUnlock()
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	return rt.check(raw)
}

// ErrUnknownTool is returned by Invoke for a tool that is not registered.
var ErrUnknownTool = errors.New("unknown tool")

// ErrBusy is what a tool call is refused with when every slot stayed taken
// for AGENT_QUEUE_TIMEOUT.
var ErrBusy = ops.ErrBusy

// Invoke runs the tool name for owner with raw JSON arguments, whatever the
// transport: it waits for one of AGENT_MAX_CONCURRENT_CALLS slots (refusing
// with an error wrapping ErrBusy after AGENT_QUEUE_TIMEOUT), decodes and validates the arguments, gives the tool a Call
// with its own folder, turns a panic into an error, and removes the folder
// when the tool returns.
func (s *Service) Invoke(ctx context.Context, name, owner string, raw json.RawMessage) (*Result, error) {
	return s.invoke(ctx, name, owner, "", raw)
}

// invoke is Invoke with the id of the request that carried the call, for logs.
func (s *Service) invoke(ctx context.Context, name, owner, requestID string, raw json.RawMessage) (res *Result, err error) {
	s.mu.RLock()
	rt, ok := s.tools[name]
	var names []string // for the error only: not copied on every call
	if !ok {
		names = slices.Clone(s.toolOrder)
	}
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q; this agent has: %v", ErrUnknownTool, name, names)
	}
	if owner == "" {
		owner = AnonymousOwner
	}
	release, err := s.slots.Acquire(ctx)
	if err != nil {
		s.metrics.ToolCalls.WithLabelValues(name, "refused").Inc()
		return nil, err
	}
	defer release()
	call := s.newCall(name, owner, requestID)
	call.hooks = calls.HooksFrom(ctx)
	defer call.end()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	call.meter = ops.MeterWork(ctx, s.quota, owner, "work:"+filepath.Base(call.dir), filepath.Join(call.dir, "work"), stop)
	defer call.meter.End()
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			call.Logger.Error("tool panicked", "panic", p, "stack", string(debug.Stack()))
			res, err = nil, fmt.Errorf("tool %s failed with an internal error; the agent's log has the details", name)
		}
		if err == nil && res == nil {
			res = &Result{}
		}
		if err == nil && ctx.Err() != nil { // cancelled: nobody takes the result
			call.discard(ctx, res.stored)
			res, err = nil, fmt.Errorf("tool %s stopped: %w", name, context.Cause(ctx))
		}
		if wq, ok := errors.AsType[*ops.WorkQuotaError](context.Cause(ctx)); ok && err != nil {
			err = wq // the tool saw a cancelled context; say why
		}
		if err != nil {
			err = s.callerError(call, err)
		}
		s.metrics.ToolCalls.WithLabelValues(name, outcome(err)).Inc()
		call.logDone(time.Since(start), res, err)
	}()
	return rt.run(ctx, call, raw)
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
