package agentcore

import (
	"cmp"
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

// Tool describes a tool; docs/authoring.md says what each field publishes.
type Tool struct {
	Name        string   // e.g. "ocr_document"
	Title       string   // optional human title
	Description string   // what the tool does and when to use it, for the model
	ReadOnly    bool     // changes nothing but its own outputs (readOnlyHint)
	Destructive bool     // may delete or overwrite more than its new outputs (destructiveHint; false unless set)
	Idempotent  bool     // a repeated call has no further effect (idempotentHint)
	OpenWorld   bool     // reaches outside systems beyond its inputs (openWorldHint; false unless set)
	InputTypes  []string // MIME types of the files it takes; nil: any
	OutputTypes []string // MIME types of the files it hands out; nil: any; empty, non-nil: none
	Examples    []string // example requests for the agent card; nil: one from the input schema
	Long        bool     // calls may run for minutes: over MCP a durable task where the client takes tasks
	View        string   // the ui:// view (AddView) of its results; "": the file view if it hands out files
	NoView      bool     // no default file view
	Visibility  []string // who may call it under MCP Apps: "model", "app"; nil: both

	// scope is an OAuth scope a caller needs beyond tools:call
	// (AGENT_AUTH=oauth): files:write for attach_file, whose result lets
	// its view upload.
	scope string
}

// ToolDef is a registered tool and what was derived from its types.
type ToolDef struct {
	Tool
	InputSchema  *jsonschema.Schema // the arguments' JSON schema
	FileParams   []string           // JSON paths of the file parameters: "source", "sources", "embeds[].content"
	OutputSchema *jsonschema.Schema // the structured content's schema (AddTypedTool); nil for others

	// argsSchema is the schema the arguments are validated against: where
	// a FileAttachment goes, the object or a string (acceptedSchema).
	argsSchema *jsonschema.Schema
}

// ToolFunc is a tool's implementation. Its error is what the caller sees: make
// it say what was wrong and what to do.
type ToolFunc[In any] func(ctx context.Context, call *Call, in In) (*Result, error)

type registeredTool struct {
	def ToolDef
	run func(ctx context.Context, call *Call, raw json.RawMessage) (*Result, error)
	// check decodes and validates arguments without running the tool.
	check func(raw json.RawMessage) error
}

// AddTool registers a tool whose arguments decode into In, a struct (its tags:
// docs/authoring.md). It panics when In cannot describe tool arguments.
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
	dec, err := newArgDecoder(reflect.TypeFor[In]())
	if err != nil {
		return err
	}
	rt := &registeredTool{
		def: ToolDef{Tool: t, InputSchema: schema, FileParams: fileParams, OutputSchema: out, argsSchema: dec.resolved.Schema()},
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

// toolInfo is the tool name as the bindings see it.
func (s *Service) toolInfo(name string) (calls.Tool, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rt, ok := s.tools[name]
	if !ok {
		return calls.Tool{}, false
	}
	return rt.def.info(), true
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
		InputSchema: d.InputSchema, OutputSchema: d.OutputSchema, FileParams: d.FileParams, ArgsSchema: d.argsSchema}
}

// Invoke runs the tool name for owner with raw JSON arguments as a transport
// does: in a call slot (or ErrBusy), validated, its folder removed after.
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
	owner = cmp.Or(owner, AnonymousOwner)
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
			s.discardStored(ctx, res.stored)
			res, err = nil, fmt.Errorf("tool %s stopped: %w", name, context.Cause(ctx))
		}
		if wq, ok := errors.AsType[*ops.WorkQuotaError](context.Cause(ctx)); ok && err != nil {
			err = wq // the tool saw a cancelled context; say why
		}
		result := "ok"
		if err != nil {
			err, result = s.callerError(call, err), "error"
		}
		s.metrics.ToolCalls.WithLabelValues(name, result).Inc()
		call.logDone(time.Since(start), res, err)
	}()
	return rt.run(ctx, call, raw)
}
