package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentura/agentura/gateway"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	"github.com/agentura/agentura/internal/testkit/testagent"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// A chat host's call through the gateway to an agent is one trace (issue
// 38): the host's traceparent in _meta (written by hand: the host is none
// of ours) is the parent of the gateway's server span, whose client span
// to the agent is the parent of the agent's server span, carried over HTTP
// in the call's _meta.
func TestGatewayContinuesHostsTraceToAgent(t *testing.T) {
	spans := otlptest.Memory(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	agent := testagent.Start(t, testagent.Options{})
	g, err := gateway.New(ctx, gateway.Config{Agents: []gateway.Agent{{URL: agent.Endpoint}}, Roots: []string{t.TempDir()}, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	const traceID, hostSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res, err := connectHost(t, ctx, g).session.CallTool(ctx, &mcp.CallToolParams{Name: "make_blob", Arguments: map[string]any{"bytes": 10},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-" + hostSpan + "-01"}})
	if err != nil || res.IsError {
		t.Fatalf("make_blob through the gateway: %v %q", err, resultText(res))
	}

	byParent := map[string]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		if s.Name == "tools/call make_blob" && s.SpanContext.TraceID().String() == traceID {
			byParent[s.Parent.SpanID().String()] = s
		}
	}
	gw, ok := byParent[hostSpan]
	if !ok || gw.SpanKind != trace.SpanKindServer {
		t.Fatalf("no gateway server span under the host's %s; spans of the trace by parent: %v", hostSpan, byParent)
	}
	out, ok := byParent[gw.SpanContext.SpanID().String()]
	if !ok || out.SpanKind != trace.SpanKindClient {
		t.Fatalf("no client span under the gateway's %s: %v", gw.SpanContext.SpanID(), byParent)
	}
	in, ok := byParent[out.SpanContext.SpanID().String()]
	if !ok || in.SpanKind != trace.SpanKindServer || !in.Parent.IsRemote() {
		t.Fatalf("no agent span, a remote child of the gateway's client span %s: %v", out.SpanContext.SpanID(), byParent)
	}
}
