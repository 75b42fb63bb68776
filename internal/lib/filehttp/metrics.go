package filehttp

import (
	"net/http"
	"strconv"

	"github.com/agentura/agentura/internal/lib/promreg"
	"github.com/prometheus/client_golang/prometheus"
)

// serverMetrics are the counters of a Server. A nil *serverMetrics counts
// nothing.
type serverMetrics struct {
	downloads     *prometheus.CounterVec
	downloadsOK   prometheus.Counter // downloads{status="200"}
	downloadBytes prometheus.Counter
	uploads       *prometheus.CounterVec
}

func newServerMetrics(reg prometheus.Registerer) (*serverMetrics, error) {
	if reg == nil {
		return nil, nil
	}
	var m serverMetrics
	var err error
	if m.downloads, err = promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_downloads_total",
		Help: "Requests to /files/, by HTTP status.",
	}, []string{"status"})); err != nil {
		return nil, err
	}
	m.downloadsOK = m.downloads.WithLabelValues("200")
	if m.downloadBytes, err = promreg.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "agentura_download_bytes_total",
		Help: "Bytes of file content sent by /files/.",
	})); err != nil {
		return nil, err
	}
	if m.uploads, err = promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_uploads_total",
		Help: "Requests to /uploads, by HTTP status.",
	}, []string{"status"})); err != nil {
		return nil, err
	}
	return &m, nil
}

func (m *serverMetrics) download(status int, bytes int64) {
	if m == nil {
		return
	}
	if status == http.StatusOK {
		m.downloadsOK.Inc() // resolved once: the label lookup is not free at this rate
	} else {
		m.downloads.WithLabelValues(strconv.Itoa(status)).Inc()
	}
	if status == http.StatusOK || status == http.StatusPartialContent {
		m.downloadBytes.Add(float64(bytes)) // file content only, not error bodies
	}
}

func (m *serverMetrics) upload(status int) {
	if m == nil {
		return
	}
	m.uploads.WithLabelValues(strconv.Itoa(status)).Inc()
}
