package agentcore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentura/agentura/agentcore/internal/calls"
)

// runner is the Service as the bindings run it (calls.Runner).
type runner struct{ s *Service }

// Tool returns the registered tool called name.
func (r runner) Tool(name string) (calls.Tool, bool) { return r.s.toolInfo(name) }

// Tools lists the registered tools in registration order.
func (r runner) Tools() []calls.Tool { return r.s.toolInfos() }

// Check decodes and validates args as the arguments of the tool name.
func (r runner) Check(name string, args json.RawMessage) error {
	r.s.mu.RLock()
	rt, ok := r.s.tools[name]
	r.s.mu.RUnlock()
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	return rt.check(args)
}

// Run runs a call through Invoke's path: a slot, a Call with its folder,
// the tool, its error made fit for the caller.
func (r runner) Run(ctx context.Context, req calls.Request) (*calls.Result, error) {
	res, err := r.s.invoke(ctx, req.Tool, req.Owner, req.RequestID, req.Args)
	if err != nil {
		return nil, err
	}
	return res.outcome(), nil
}
