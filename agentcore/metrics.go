package agentcore

import "github.com/prometheus/client_golang/prometheus"

// serviceMetrics are the metrics agentcore itself keeps; fileserve and
// cleanup register theirs in the same registry.
type serviceMetrics struct {
	toolCalls *prometheus.CounterVec
}

func newServiceMetrics(reg *prometheus.Registry) *serviceMetrics {
	m := &serviceMetrics{
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentura_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok, error).",
		}, []string{"tool", "outcome"}),
	}
	reg.MustRegister(m.toolCalls, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}
