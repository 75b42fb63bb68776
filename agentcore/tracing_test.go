package agentcore

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/lib/otelsetup"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace/noop"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// startTracing points the OTEL_* variables at a new receiver and starts
// the process's tracing (and OTLP metrics) as an agent's Main does; flush
// sends what is buffered and returns the spans received. The global
// providers are the no-op ones again after the test.
func startTracing(t testing.TB) (flush func() []otlptest.Span) {
	t.Helper()
	recv, flushAll := startTelemetry(t)
	return func() []otlptest.Span {
		flushAll()
		return recv.Spans()
	}
}

// startTelemetry is startTracing giving the receiver, whose spans and
// metrics the test reads after flush.
func startTelemetry(t testing.TB) (recv *otlptest.Receiver, flush func()) {
	t.Helper()
	recv = otlptest.Start(t)
	for k, v := range recv.Env() {
		t.Setenv(k, v)
	}
	t.Setenv("OTEL_SERVICE_NAME", "traced-agent")
	tracing, err := otelsetup.Start(context.Background(), "test-agent")
	if err != nil || !tracing.Enabled() || !tracing.MetricsEnabled() {
		t.Fatalf("tracing and metrics not started: %v", err)
	}
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
	})
	return recv, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := tracing.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func hexOf(id []byte) string { return hex.EncodeToString(id) }

func spanAttr(s otlptest.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// spanValues is every text an exported span carries that a secret could
// leak into: its name, its status message, and the values of its and its
// events' attributes.
func spanValues(s otlptest.Span) []string {
	values := []string{s.Name, s.Status.GetMessage()}
	for _, kv := range s.Attributes {
		values = append(values, kv.Value.String())
	}
	for _, ev := range s.Events {
		for _, kv := range ev.Attributes {
			values = append(values, kv.Value.String())
		}
	}
	return values
}

// The check (38): a caller that is none of ours sends a tools/call
// whose _meta carries a W3C traceparent written by hand; the agent exports
// over OTLP/HTTP a server span in that trace, child of the caller's span,
// named "tools/call echo" with the MCP conventions' attributes, a child
// span per file input and one per response's outputs. The second call reads the first's output by its
// signed URL: no exported attribute, status or resource value holds the
// URL's token, and the third, refused, records the reason its caller read,
// but not the file's name. A third caller carries its trace in the HTTP traceparent
// header alone, which the agent continues too.
func TestToolCallContinuesCallersTrace(t *testing.T) {
	flush := startTracing(t)
	svc, srv := serveTestService(t, nil)
	addEchoTool(svc)
	const (
		traceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
		parentID    = "00f067aa0ba902b7"
		headerTrace = "0af7651916cd43dd8448eb211c80319c"
	)
	caller := mcptest.NewSessionless(srv.URL + "/mcp")
	meta := map[string]any{"traceparent": "00-" + traceID + "-" + parentID + "-01", "tracestate": "vendor=x"}
	type callResult struct {
		Structured struct {
			DownloadURL string `json:"download_url"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	first := mcptest.Call[callResult](t, caller, "tools/call", map[string]any{"name": "echo", "_meta": meta,
		"arguments": map[string]any{"source": "data:text/plain;name=secret-plan.txt;base64,aGVsbG8="}})
	u, err := url.Parse(first.Structured.DownloadURL)
	if err != nil || first.IsError || u.Query().Get("token") == "" {
		t.Fatalf("first call: %+v (%v), want a download URL with its token", first, err)
	}
	token := u.Query().Get("token")
	second := mcptest.Call[callResult](t, caller, "tools/call", map[string]any{"name": "echo", "_meta": meta,
		"arguments": map[string]any{"source": first.Structured.DownloadURL}})
	if second.IsError {
		t.Fatalf("second call: %+v", second)
	}
	failed := mcptest.Call[callResult](t, caller, "tools/call", map[string]any{"name": "echo", "_meta": meta,
		"arguments": map[string]any{"source": map[string]any{"name": "secret-plan.txt", "content": "secret-plan.txt"}}})
	if !failed.IsError {
		t.Fatalf("a bare name as the file: %+v, want a tool error", failed)
	}
	viaHeader := mcptest.NewSessionless(srv.URL + "/mcp")
	viaHeader.Header = http.Header{"Traceparent": {"00-" + headerTrace + "-b7ad6b7169203331-01"}}
	mcptest.Call[callResult](t, viaHeader, "tools/call", map[string]any{"name": "echo",
		"arguments": map[string]any{"source": "data:text/plain;name=c.txt;base64,aGVsbG8="}})

	spans := flush()
	var calls, inputs, outputs, header, errored int
	for _, s := range spans {
		tid := strings.ToLower(hexOf(s.TraceId))
		switch {
		case s.Name == "tools/call echo" && tid == traceID:
			calls++
			if hexOf(s.ParentSpanId) != parentID || s.Kind != tracepb.Span_SPAN_KIND_SERVER {
				t.Errorf("span %s: parent %s kind %v, want child of the caller's %s, server", s.Name, hexOf(s.ParentSpanId), s.Kind, parentID)
			}
			if spanAttr(s, "mcp.method.name") != "tools/call" || spanAttr(s, "gen_ai.tool.name") != "echo" ||
				spanAttr(s, "mcp.protocol.version") != mcptest.Revision || spanAttr(s, "gen_ai.operation.name") != "execute_tool" {
				t.Errorf("span %s: attributes %v", s.Name, s.Attributes)
			}
			if s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
				errored++
				if spanAttr(s, "error.type") != "tool_error" || !strings.Contains(s.Status.GetMessage(), "unresolved file reference") {
					t.Errorf("failed call's span: status %q, error.type %q; want the reason the caller read", s.Status.GetMessage(), spanAttr(s, "error.type"))
				}
			}
			if s.TraceState != "vendor=x" {
				t.Errorf("span %s: tracestate %q, want the caller's vendor=x", s.Name, s.TraceState)
			}
		case s.Name == "tools/call echo" && tid == headerTrace:
			header++
			if hexOf(s.ParentSpanId) != "b7ad6b7169203331" {
				t.Errorf("span from the header's trace: parent %s", hexOf(s.ParentSpanId))
			}
		case s.Name == "store outputs" && tid == traceID:
			outputs++
			for _, kv := range s.Attributes {
				if kv.Key == "agentura.outputs.size" && kv.Value.GetIntValue() != 5 {
					t.Errorf("outputs span: size %v, want the 5 bytes of hello", kv.Value)
				}
			}
		case s.Name == "resolve file input" && tid == traceID:
			inputs++
			if s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
				if !strings.HasPrefix(s.Status.GetMessage(), "unresolved file reference: ") || spanAttr(s, "error.type") != "unresolved file reference" {
					t.Errorf("refused input's span: status %q, error.type %q; want the reason the caller read, and its kind", s.Status.GetMessage(), spanAttr(s, "error.type"))
				}
			} else if tr := spanAttr(s, "agentura.file.transport"); tr != "data" && tr != "http" {
				t.Errorf("input span: transport %q, want data or http", tr)
			}
		}
		for _, v := range spanValues(s) {
			if strings.Contains(v, "token=") || strings.Contains(v, token) || strings.Contains(v, "secret-plan") || strings.Contains(v, "aGVsbG8") {
				t.Errorf("span %s records %q: a token, a file name or file bytes", s.Name, v)
			}
		}
	}
	if calls != 3 || errored != 1 || header != 1 {
		t.Errorf("spans tools/call echo: %d in the _meta trace (%d failed), %d in the header's; want 3 (1) and 1 (got %d spans)", calls, errored, header, len(spans))
	}
	if inputs != 3 || outputs != 2 {
		t.Errorf("spans in the trace: %d of file inputs, %d of outputs; want 3 (one refused) and 2", inputs, outputs)
	}
	for _, s := range spans {
		if s.Service != "traced-agent" {
			t.Errorf("span %s of service %q, want OTEL_SERVICE_NAME's traced-agent", s.Name, s.Service)
			break
		}
	}
}
