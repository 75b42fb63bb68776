// Package otlptest is an OpenTelemetry collector inside a test: an OTLP/HTTP
// receiver that decodes each protobuf ExportTraceServiceRequest and keeps
// the spans, each with the service that sent it, for the test to read
// (Start); or, inside one process, a global tracer provider that keeps its
// spans in memory (Memory).
package otlptest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is an exported span and the service.name of its resource.
type Span struct {
	*tracepb.Span
	Service string
}

// Receiver is the collector; URL is what OTEL_EXPORTER_OTLP_ENDPOINT names.
type Receiver struct {
	URL string

	mu    sync.Mutex
	spans []Span
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

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want protobuf on /v1/traces", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(req.Body)
	var export coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &export)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range export.ResourceSpans {
		var service string
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				service = kv.Value.GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, Span{Span: s, Service: service})
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
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
