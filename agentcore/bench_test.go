package agentcore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/heappeak"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkResolveBase64 measures resolving a 50 MiB input sent inline as
// base64, as a data URI and as plain base64: throughput of the decoded bytes
// and how much the heap grows while it streams to disk. The content string
// itself (67 MiB of base64) is live before the call and not counted; the
// decoded 50 MiB must never be held whole.
func BenchmarkResolveBase64(b *testing.B) {
	const size = 50 << 20
	raw := make([]byte, size)
	rand.Read(raw)
	plain := base64.StdEncoding.EncodeToString(raw)
	raw = nil
	forms := []struct{ name, content string }{
		{"data-uri", "data:application/octet-stream;name=big.bin;base64," + plain},
		{"base64", plain},
	}
	svc := newTestService(b, func(c *Config) { c.MaxUploadBytes = size })
	ctx := context.Background()
	for _, form := range forms {
		b.Run(form.name+"/50MiB", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var worst uint64
			for b.Loop() {
				call := svc.newCall("bench", "owner", "")
				peak := heappeak.Measure(func() {
					f, err := call.ResolveFile(ctx, "big.bin", form.content)
					if err != nil {
						b.Fatal(err)
					}
					if st, err := os.Stat(f.Path); err != nil || st.Size() != size {
						b.Fatalf("resolved %v %v", st, err)
					}
				})
				worst = max(worst, peak)
				call.end()
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-heap-MiB")
		})
	}
}

// toolCallBench is a service answering tools/call over HTTP (2026-07-28,
// stateless) and a caller sending one: a small data URI echoed back, its
// _meta carrying a caller's traceparent.
type toolCallBench struct {
	caller *mcptest.Sessionless
	params map[string]any
}

func newToolCallBench(b *testing.B) *toolCallBench {
	svc, srv := serveTestService(b, func(c *Config) { c.RateLimit = -1 }) // one caller, as fast as it goes
	addEchoTool(svc)
	return &toolCallBench{caller: mcptest.NewSessionless(srv.URL + "/mcp"), params: map[string]any{"name": "echo",
		"_meta":     map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		"arguments": map[string]any{"source": "data:text/plain;name=a.txt;base64,aGVsbG8="}}}
}

func (t *toolCallBench) call(b *testing.B) {
	if res := mcptest.Call[map[string]any](b, t.caller, "tools/call", t.params); res["isError"] == true {
		b.Fatalf("tools/call: %v", res)
	}
}

// benchToolCalls measures one tool call after another.
func benchToolCalls(b *testing.B) {
	t := newToolCallBench(b)
	b.ReportAllocs()
	for b.Loop() {
		t.call(b)
	}
}

// BenchmarkToolCallTracingOff is a tool call with tracing off (no OTEL_*
// variable): the cost of reading the caller's trace context that goes
// nowhere. With BenchmarkToolCallTracingOn, it gives the allocations
// tracing adds to a call; BenchmarkToolCallTracing gives its latency.
func BenchmarkToolCallTracingOff(b *testing.B) { benchToolCalls(b) }

// BenchmarkToolCallTracingOn is the same call with every span sampled and
// exported over OTLP/HTTP to a collector in the process (the batch
// processor's defaults).
func BenchmarkToolCallTracingOn(b *testing.B) {
	flush := startTracing(b)
	benchToolCalls(b)
	b.StopTimer()
	if n := len(flush()); n == 0 {
		b.Fatal("no span exported")
	}
}

// BenchmarkToolCallTracing is the latency of a tool call with tracing off
// and on (as in BenchmarkToolCallTracingOff and On), measured in one run
// that alternates them call by call, so the machine's load falls on both
// alike: an iteration is one call of each, in turn off first and on
// first. It reports the median and 99th percentile of each (off-p50-ms,
// on-p99-ms, ...); make bench's report computes the overhead. Off is the
// no-op tracer provider, which the process's global one is set to between
// calls: agentcore looks the provider up per span, and a span ends on the
// provider that started it. The meter provider (the MCP operation
// durations) is switched with it.
func BenchmarkToolCallTracing(b *testing.B) {
	flush := startTracing(b)
	on, off := otel.GetTracerProvider(), noop.NewTracerProvider()
	onMeter, offMeter := otel.GetMeterProvider(), metricnoop.NewMeterProvider()
	t := newToolCallBench(b)
	var offTimes, onTimes []time.Duration
	timed := func(tp trace.TracerProvider, into *[]time.Duration) {
		otel.SetTracerProvider(tp)
		if tp == on { // OTLP metrics (the MCP durations) go with the spans
			otel.SetMeterProvider(onMeter)
		} else {
			otel.SetMeterProvider(offMeter)
		}
		start := time.Now()
		t.call(b)
		*into = append(*into, time.Since(start))
	}
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			timed(off, &offTimes)
			timed(on, &onTimes)
		} else {
			timed(on, &onTimes)
			timed(off, &offTimes)
		}
		i++
	}
	b.StopTimer()
	otel.SetTracerProvider(on)
	otel.SetMeterProvider(onMeter)
	if n := len(flush()); n == 0 {
		b.Fatal("no span exported")
	}
	for _, m := range []struct {
		mode  string
		times []time.Duration
	}{{"off", offTimes}, {"on", onTimes}} {
		slices.Sort(m.times)
		b.ReportMetric(percentileMs(m.times, 50), m.mode+"-p50-ms")
		b.ReportMetric(percentileMs(m.times, 99), m.mode+"-p99-ms")
	}
}

// percentileMs is the p-th percentile of sorted durations (nearest rank),
// in milliseconds.
func percentileMs(sorted []time.Duration, p int) float64 {
	rank := (len(sorted)*p + 99) / 100 // ceil(n·p/100), 1-based
	return float64(sorted[max(rank, 1)-1]) / float64(time.Millisecond)
}
