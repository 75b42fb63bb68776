// Package otlptest is an OpenTelemetry collector inside a test: an OTLP/HTTP
// receiver that decodes each protobuf ExportTraceServiceRequest and
// ExportMetricsServiceRequest and keeps the spans and the metrics, each with
// the service that sent it, for the test to read (Start, and Export, which
// points the process's tracer provider at one); or, inside one process, a
// global tracer provider that keeps its spans in memory (Memory). Clean
// checks that no exported span holds a secret.
package otlptest

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is an exported span and the service.name of its resource.
type Span struct {
	*tracepb.Span
	Service string
}

// Metric is an exported metric (its data points, as many as the exports
// that held it) and the service.name of its resource.
type Metric struct {
	*metricpb.Metric
	Service string
}

// Receiver is the collector; URL is what OTEL_EXPORTER_OTLP_ENDPOINT names.
type Receiver struct {
	URL string

	mu      sync.Mutex
	spans   []Span
	metrics []Metric
}

// Start serves a receiver until the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Env is the environment that points an exporter at r.
func (r *Receiver) Env() map[string]string {
	return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Metrics returns the metrics received so far, one per metric of each
// export.
func (r *Receiver) Metrics() []Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Metric(nil), r.metrics...)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want protobuf", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var answer proto.Message
	switch req.URL.Path {
	case "/v1/traces":
		answer, err = r.traces(body)
	case "/v1/metrics":
		answer, err = r.metricsOf(body)
	default:
		http.Error(w, "want /v1/traces or /v1/metrics", http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, _ := proto.Marshal(answer)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// traces keeps the spans of an ExportTraceServiceRequest.
func (r *Receiver) traces(body []byte) (proto.Message, error) {
	var export coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &export); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range export.ResourceSpans {
		service := serviceOf(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, Span{Span: s, Service: service})
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// metricsOf keeps the metrics of an ExportMetricsServiceRequest.
func (r *Receiver) metricsOf(body []byte) (proto.Message, error) {
	var export colmetricpb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &export); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range export.ResourceMetrics {
		service := serviceOf(rm.GetResource().GetAttributes())
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				r.metrics = append(r.metrics, Metric{Metric: m, Service: service})
			}
		}
	}
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

// serviceOf is the service.name among a resource's attributes.
func serviceOf(attrs []*commonpb.KeyValue) string {
	for _, kv := range attrs {
		if kv.Key == "service.name" {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// Memory makes an SDK tracer provider that keeps every span in memory the
// process's global one until the test ends (the no-op one after), and
// returns its spans: for tests of propagation inside one process.
func Memory(t testing.TB) *tracetest.InMemoryExporter {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	otel.SetTracerProvider(tp)
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		tp.Shutdown(context.Background())
	})
	return spans
}

// Export starts a receiver and makes an SDK tracer provider that exports
// to it over OTLP/HTTP (protobuf, the batch processor, as an agent's does)
// the process's global one until the test ends (the no-op one after).
// flush sends what is buffered and returns every span received so far.
// The provider is the process's: a test that calls Export must not be
// parallel, or the spans of others reach its receiver.
func Export(t testing.TB) (flush func() []Span) {
	t.Helper()
	r := Start(t)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(r.URL+"/v1/traces"))
	if err != nil {
		t.Fatalf("otlptest: exporter: %v", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	otel.SetTracerProvider(tp)
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tp.Shutdown(ctx)
	})
	return func() []Span {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := tp.ForceFlush(ctx); err != nil {
			t.Fatalf("otlptest: flush: %v", err)
		}
		return r.Spans()
	}
}

// Named returns the spans of spans named name.
func Named(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Attr returns the value of s's attribute key, nil when it has none.
func (s Span) Attr(key string) *commonpb.AnyValue {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// ChildOf reports whether s is a child of the span with trace id traceID
// and span id spanID (hex, as trace.TraceID.String gives them).
func (s Span) ChildOf(traceID, spanID string) bool {
	return Hex(s.TraceId) == traceID && Hex(s.ParentSpanId) == spanID
}

// Hex is a trace or span id as hex, as trace.TraceID.String gives it.
func Hex(id []byte) string { return hex.EncodeToString(id) }

// Clean fails the test when a span's name, attribute, status or event
// holds "token=" or one of secrets (a download token, a file's name, a
// path): what no span may carry (docs/observability.md).
func Clean(t testing.TB, spans []Span, secrets ...string) {
	t.Helper()
	forbidden := append([]string{"token="}, secrets...)
	check := func(s Span, where, text string) {
		for _, f := range forbidden {
			if f != "" && strings.Contains(text, f) {
				t.Errorf("span %q: its %s holds %q: %q", s.Name, where, f, text)
			}
		}
	}
	attrs := func(s Span, where string, kvs []*commonpb.KeyValue) {
		for _, kv := range kvs {
			check(s, where+" key", kv.Key)
			check(s, where+" "+kv.Key, kv.Value.String())
		}
	}
	for _, s := range spans {
		check(s, "name", s.Name)
		check(s, "status", s.Status.GetMessage())
		attrs(s, "attribute", s.Attributes)
		for _, e := range s.Events {
			check(s, "event", e.Name)
			attrs(s, "event attribute", e.Attributes)
		}
	}
}

// Traceparent is the W3C traceparent of the span InTrace puts in a context.
const Traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// InTrace returns ctx inside the remote, sampled span of Traceparent (with
// the tracestate "vendor=x"), carrying baggage ("user=s3cr3t") that no
// request may send on: for tests that a request carries the trace context
// and never the caller's baggage.
func InTrace(ctx context.Context) context.Context {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ts, _ := trace.ParseTraceState("vendor=x")
	ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts}))
	member, _ := baggage.NewMember("user", "s3cr3t")
	bag, _ := baggage.New(member)
	return baggage.ContextWithBaggage(ctx, bag)
}
