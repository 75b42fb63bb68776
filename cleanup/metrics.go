package cleanup

import (
	"fmt"

	"github.com/agentura/agentura/internal/lib/promreg"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the sweeper's Prometheus counters and its histogram of sweep
// durations.
type metrics struct {
	sweeps   *prometheus.CounterVec // result: ok, error, interrupted, skipped
	files    *prometheus.CounterVec // area
	bytes    *prometheus.CounterVec // area
	duration prometheus.Histogram
	lag      prometheus.Gauge
}

// durationBuckets are the upper bounds (seconds) of the sweep duration
// histogram: from a sweep with nothing to do (a millisecond) to one that
// outlasts many scheduled periods.
var durationBuckets = []float64{0.001, 0.01, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300}

// newMetrics registers the counters with reg, or takes over the ones another
// sweeper registered there before, and creates the series of every known
// label value so that they read 0 rather than being absent.
func newMetrics(reg prometheus.Registerer, rules []Rule) (*metrics, error) {
	m := &metrics{
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentura_sweeps_total",
			Help: "Cleanup sweeps by result: ok, error (some files could not be deleted), interrupted (shutdown), skipped (the previous sweep was still running).",
		}, []string{"result"}),
		files: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentura_swept_files_total",
			Help: "Files deleted by the cleanup sweeper because they outlived their area's TTL.",
		}, []string{"area"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentura_swept_bytes_total",
			Help: "Bytes of the files deleted by the cleanup sweeper.",
		}, []string{"area"}),
	}
	for _, c := range []**prometheus.CounterVec{&m.sweeps, &m.files, &m.bytes} {
		var err error
		if *c, err = promreg.Register(reg, *c); err != nil {
			return nil, fmt.Errorf("cleanup: %w", err)
		}
	}
	var err error
	m.duration, err = promreg.Register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "agentura_sweep_duration_seconds",
		Help:    "How long cleanup sweeps took (wall clock), whatever their result; skipped sweeps are not in it.",
		Buckets: durationBuckets,
	}))
	if err != nil {
		return nil, fmt.Errorf("cleanup: %w", err)
	}
	m.lag, err = promreg.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "agentura_sweep_lag_seconds",
		Help: "How long after its expiry the last sweep deleted its most overdue file (0: it deleted none). Expired files are never served; a growing lag means the sweeper falls behind and they hold disk.",
	}))
	if err != nil {
		return nil, fmt.Errorf("cleanup: %w", err)
	}
	for _, result := range []string{"ok", "error", "interrupted", "skipped"} {
		m.sweeps.WithLabelValues(result)
	}
	for _, r := range rules {
		m.files.WithLabelValues(string(r.Area))
		m.bytes.WithLabelValues(string(r.Area))
	}
	return m, nil
}
