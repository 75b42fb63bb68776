package agentcore

import "github.com/prometheus/client_golang/prometheus"

// serviceMetrics are the metrics agentcore itself keeps; fileserve and
// cleanup register theirs in the same registry.
type serviceMetrics struct {
	toolCalls *prometheus.CounterVec
	// callsQueued and callsRunning are the tool calls waiting for a slot
	// and running (AGENT_MAX_CONCURRENT_CALLS).
	callsQueued, callsRunning prometheus.Gauge
	// refused counts requests refused by the limits, by reason: busy
	// (no call slot), quota (AGENT_OWNER_QUOTA_BYTES), rate_limit
	// (AGENT_RATE_LIMIT), slow_body (AGENT_MIN_BODY_RATE).
	refused *prometheus.CounterVec
}

func newServiceMetrics(reg *prometheus.Registry) *serviceMetrics {
	m := &serviceMetrics{
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentura_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok, error, refused).",
		}, []string{"tool", "outcome"}),
		callsQueued: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentura_tool_calls_queued",
			Help: "Tool calls waiting for a free slot (AGENT_MAX_CONCURRENT_CALLS).",
		}),
		callsRunning: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentura_tool_calls_running",
			Help: "Tool calls running now.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentura_refused_total",
			Help: "Requests and calls refused by a limit, by reason (busy, quota, rate_limit, slow_body).",
		}, []string{"reason"}),
	}
	reg.MustRegister(m.toolCalls, m.callsQueued, m.callsRunning, m.refused, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}
