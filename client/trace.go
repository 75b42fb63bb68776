package client

import (
	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Trace makes each request c sends a client span of the global tracer
// provider, child of the span in the request's context, and carries that
// span's W3C trace context (traceparent, tracestate, baggage) in the
// request's params._meta (SEP-414), so the agent's span of the request
// joins the same trace. The span records the request's JSON-RPC id when
// the transport is one of LimitMessages' (streamable HTTP or a command),
// which tells it; and each request is a point of the
// mcp.client.operation.duration histogram of the global meter provider.
// Without a tracer provider (tracing off) it adds
// nothing to a request. Call it once per client: a second call would add a
// second span per request.
func Trace(c *mcp.Client) {
	c.AddSendingMiddleware(mcptrace.Client)
}
