package agenttest_test

import (
	"context"
	"testing"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agentcore/agenttest"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The host side propagates (issue 38): the client's span of a tools/call
// and the agent's span of it are one trace, the agent's the child of the
// client's. The two meet over the go-sdk's in-memory transport, where no
// HTTP header and no shared context exists: params._meta, written by
// client.Trace, is the only carrier.
func TestClientPropagatesTraceToAgent(t *testing.T) {
	spans := otlptest.Memory(t)

	a := agenttest.Start(t, agentcore.Info{Name: "digester"}, register)
	ctx, root := otel.Tracer("test").Start(context.Background(), "host turn")
	if _, err := a.Call(ctx, "digest", map[string]any{"source": "notes.txt"}, writeFile(t, "notes.txt", []byte("hello"))); err != nil {
		t.Fatal(err)
	}
	root.End()

	var client, server *tracetest.SpanStub
	for i, s := range spans.GetSpans() {
		if s.Name != "tools/call digest" {
			continue
		}
		switch s.SpanKind {
		case trace.SpanKindClient:
			client = &spans.GetSpans()[i]
		case trace.SpanKindServer:
			server = &spans.GetSpans()[i]
		}
	}
	if client == nil || server == nil {
		t.Fatalf("want a client and a server span named tools/call digest, got %v", spans.GetSpans().Snapshots())
	}
	if client.SpanContext.TraceID() != root.SpanContext().TraceID() || client.Parent.SpanID() != root.SpanContext().SpanID() {
		t.Errorf("client span %v not under the host's span %v", client.SpanContext, root.SpanContext())
	}
	if server.SpanContext.TraceID() != client.SpanContext.TraceID() || server.Parent.SpanID() != client.SpanContext.SpanID() || !server.Parent.IsRemote() {
		t.Errorf("agent's span %v (parent %v), want a remote child of the client's %v", server.SpanContext, server.Parent, client.SpanContext)
	}
}
