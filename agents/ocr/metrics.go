package ocr

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the agent's own Prometheus metrics, served at /metrics beside
// agentcore's.
type metrics struct {
	pages   prometheus.Counter
	seconds *prometheus.HistogramVec // by command and outcome
	waiting prometheus.Gauge
	running prometheus.Gauge
}

func newMetrics() *metrics {
	return &metrics{
		pages: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentura_ocr_pages_total",
			Help: "Pages whose text was recognised.",
		}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentura_ocr_command_seconds",
			Help:    "Run time of the external commands (tesseract, pdftoppm, pdfinfo), by outcome: ok, failed, stopped.",
			Buckets: prometheus.ExponentialBuckets(0.01, 3, 10), // 10 ms to 3 min
		}, []string{"command", "outcome"}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentura_ocr_waiting",
			Help: "Heavy commands waiting for a free slot (AGENT_OCR_CONCURRENCY).",
		}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentura_ocr_running",
			Help: "Heavy commands running.",
		}),
	}
}

// register adds the metrics to reg.
func (m *metrics) register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.pages, m.seconds, m.waiting, m.running} {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("register the OCR metrics (is the agent registered twice on one service?): %w", err)
	}
	return nil
}

// observe records one run of command that took since start.
func (m *metrics) observe(command string, start time.Time, err error, stopped bool) {
	outcome := "ok"
	switch {
	case stopped:
		outcome = "stopped"
	case err != nil:
		outcome = "failed"
	}
	m.seconds.WithLabelValues(base(command), outcome).Observe(time.Since(start).Seconds())
}
