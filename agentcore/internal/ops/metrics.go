// Package ops is what an operator runs the agent by: its limits (call
// slots, the owner quota and the work meter, connection caps), its health
// (/readyz, --healthcheck, the container's memory limit) and the metrics of
// both. Its settings are the Limits section of agentcore.Config.
package ops

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the metrics agentcore itself keeps; fileserve and cleanup
// register theirs in the same registry.
type Metrics struct {
	// ToolCalls counts tool calls by tool and outcome.
	ToolCalls *prometheus.CounterVec
	// CallsQueued and CallsRunning are the tool calls waiting for a slot
	// and running (AGENT_MAX_CONCURRENT_CALLS).
	CallsQueued, CallsRunning prometheus.Gauge
	// Refused counts requests refused by the limits, by reason: busy
	// (no call slot), quota (AGENT_OWNER_QUOTA_BYTES), rate_limit
	// (AGENT_RATE_LIMIT), slow_body (AGENT_MIN_BODY_RATE).
	Refused *prometheus.CounterVec
}

// NewMetrics registers the metrics in reg, with Go's and the process's.
func NewMetrics(reg *prometheus.Registry) *Metrics {
	m := &Metrics{
		ToolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentura_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok, error, refused).",
		}, []string{"tool", "outcome"}),
		CallsQueued: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentura_tool_calls_queued",
			Help: "Tool calls waiting for a free slot (AGENT_MAX_CONCURRENT_CALLS).",
		}),
		CallsRunning: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentura_tool_calls_running",
			Help: "Tool calls running now.",
		}),
		Refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentura_refused_total",
			Help: "Requests and calls refused by a limit, by reason (busy, quota, rate_limit, slow_body).",
		}, []string{"reason"}),
	}
	reg.MustRegister(m.ToolCalls, m.CallsQueued, m.CallsRunning, m.Refused, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}
