package agentcore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"testing"

	"github.com/agentura/agentura/internal/testkit/heappeak"
	"github.com/agentura/agentura/internal/testkit/mcptest"
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

// benchToolCalls measures tools/call over HTTP (2026-07-28, stateless), a
// small data URI echoed back, its _meta carrying a caller's traceparent.
func benchToolCalls(b *testing.B) {
	svc, srv := serveTestService(b, func(c *Config) { c.RateLimit = -1 }) // one caller, as fast as it goes
	addEchoTool(svc)
	caller := mcptest.NewSessionless(srv.URL + "/mcp")
	params := map[string]any{"name": "echo",
		"_meta":     map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		"arguments": map[string]any{"source": "data:text/plain;name=a.txt;base64,aGVsbG8="}}
	b.ReportAllocs()
	for b.Loop() {
		if res := mcptest.Call[map[string]any](b, caller, "tools/call", params); res["isError"] == true {
			b.Fatalf("tools/call: %v", res)
		}
	}
}

// BenchmarkToolCallTracingOff is a tool call with tracing off (no OTEL_*
// variable): the cost of reading the caller's trace context that goes
// nowhere.
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
