package main

import (
	"context"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/lib/otelsetup"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	"github.com/agentura/agentura/internal/testkit/testagent"
	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace/noop"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// `agentura call` and the agent it calls are one trace (issue 38), across
// two processes that each export over OTLP/HTTP to one collector: the
// command's span is the root, its tools/call span the parent of the
// agent's, which the agent continued from the call's _meta. Both spans
// record the request's JSON-RPC id, the same on both sides, and the CLI
// exports its wait for the call as one point of
// mcp.client.operation.duration. The CLI's download of the output is in
// the same trace: the agent's span of it continues the request's
// traceparent header.
func TestCallIsOneTraceWithTheAgent(t *testing.T) {
	recv := otlptest.Start(t)
	for k, v := range recv.Env() {
		t.Setenv(k, v) // the agent here, and the CLI, which inherits them
	}
	t.Setenv("OTEL_SERVICE_NAME", "")
	tracing, err := otelsetup.Start(context.Background(), "agent-under-test")
	if err != nil || !tracing.Enabled() {
		t.Fatalf("tracing not started: %v", err)
	}
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
	})
	a := testagent.Start(t, testagent.Options{})

	if r := runCLI(t, t.TempDir(), "call", a.Endpoint, "make_blob", "--json", `{"bytes": 10}`, "--out", "results"); r.code != 0 {
		t.Fatal(r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tracing.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	var root, client, agent, download *otlptest.Span
	spans := recv.Spans()
	for i, s := range spans {
		switch {
		case s.Service == "agent-under-test" && s.Name == "GET /files/{id}":
			download = &spans[i]
		case s.Service == "agentura" && s.Name == "agentura call":
			root = &spans[i]
		case s.Service == "agentura" && s.Name == "tools/call make_blob" && s.Kind == tracepb.Span_SPAN_KIND_CLIENT:
			client = &spans[i]
		case s.Service == "agent-under-test" && s.Name == "tools/call make_blob" && s.Kind == tracepb.Span_SPAN_KIND_SERVER:
			agent = &spans[i]
		}
	}
	if root == nil || client == nil || agent == nil {
		t.Fatalf("want the command's span, its tools/call span and the agent's; got %d spans: %v", len(spans), spans)
	}
	if string(client.TraceId) != string(root.TraceId) || string(client.ParentSpanId) != string(root.SpanId) {
		t.Errorf("the CLI's tools/call span is not under its command's span")
	}
	if string(agent.TraceId) != string(root.TraceId) || string(agent.ParentSpanId) != string(client.SpanId) {
		t.Errorf("the agent's span (trace %x, parent %x) is not the child of the CLI's (trace %x, span %x)",
			agent.TraceId, agent.ParentSpanId, client.TraceId, client.SpanId)
	}
	// The CLI downloads the output (the agent embeds nothing): the agent's
	// span of that download is in the command's trace too.
	if download == nil || string(download.TraceId) != string(root.TraceId) {
		t.Errorf("the agent's GET /files/{id} span of the CLI's download: %v, want it in the command's trace %x", download, root.TraceId)
	}
	clientID, agentID := spanString(client, "jsonrpc.request.id"), spanString(agent, "jsonrpc.request.id")
	if clientID == "" || clientID != agentID {
		t.Errorf("jsonrpc.request.id: %q on the CLI's span, %q on the agent's; want the same id", clientID, agentID)
	}
	var points int
	for _, m := range recv.Metrics() {
		if m.Service != "agentura" || m.Name != "mcp.client.operation.duration" || m.GetHistogram() == nil {
			continue
		}
		for _, p := range m.GetHistogram().DataPoints {
			attrs := map[string]string{}
			for _, kv := range p.Attributes {
				attrs[kv.Key] = kv.Value.GetStringValue()
			}
			if attrs["mcp.method.name"] == "tools/call" {
				points++
				if attrs["gen_ai.tool.name"] != "make_blob" || p.Count != 1 || m.Unit != "s" {
					t.Errorf("the CLI's tools/call duration: %v, count %d, unit %q", attrs, p.Count, m.Unit)
				}
			}
		}
	}
	if points != 1 {
		t.Errorf("%d points of the CLI's tools/call duration, want 1", points)
	}
}

func spanString(s *otlptest.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}
