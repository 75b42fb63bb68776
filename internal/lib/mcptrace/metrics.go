package mcptrace

import (
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// The histograms of the MCP semantic conventions: how long each request
// took, in seconds, as its server handled it and as its client waited for
// it. Their attributes are the span's but the session and the JSON-RPC id
// (one series each would be one per request): mcp.method.name,
// gen_ai.tool.name and gen_ai.operation.name (tools/call),
// gen_ai.prompt.name (prompts/get), mcp.protocol.version (server), and for
// a failure error.type and rpc.response.status_code.
const (
	MetricServerDuration = "mcp.server.operation.duration"
	MetricClientDuration = "mcp.client.operation.duration"
)

// durationBuckets are the bucket boundaries the conventions advise for
// the operation durations, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// instruments are the histograms of one meter provider.
type instruments struct {
	mp             metric.MeterProvider
	server, client metric.Float64Histogram
}

// current are the histograms of the global meter provider last seen.
var current atomic.Pointer[instruments]

// instrumentsNow returns the histograms of the global meter provider,
// made once per provider: with metrics off they are the no-op provider's
// (or the global delegate's, until a provider is set), whose Enabled is
// false, and a request measures nothing.
func instrumentsNow() *instruments {
	mp := otel.GetMeterProvider()
	if in := current.Load(); in != nil && in.mp == mp {
		return in
	}
	m := mp.Meter(Instrumentation)
	in := &instruments{mp: mp}
	// The API never fails to make an instrument (an invalid one is
	// reported to the global error handler and still usable).
	in.server, _ = m.Float64Histogram(MetricServerDuration, metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request or notification as observed on the receiver from the time it was received until the result or ack is sent."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.client, _ = m.Float64Histogram(MetricClientDuration, metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	current.Store(in)
	return in
}
