package fileserve

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/agentura/agentura/internal/promreg"
	"github.com/prometheus/client_golang/prometheus"
)

// serverMetrics are the counters of a Server. A nil *serverMetrics counts
// nothing.
type serverMetrics struct {
	downloads     *prometheus.CounterVec
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
	m.downloads.WithLabelValues(strconv.Itoa(status)).Inc()
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

// Instrument wraps a Store to count files stored and bytes stored per area:
// agentura_files_stored_total{area} and agentura_stored_bytes_total{area}.
// With a nil reg it returns st unchanged. It panics, as
// prometheus.MustRegister does, if reg holds a different collector under one
// of these names.
func Instrument(st Store, reg prometheus.Registerer) Store {
	if reg == nil {
		return st
	}
	files, err := promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_files_stored_total",
		Help: "Files added to the store, by area.",
	}, []string{"area"}))
	if err != nil {
		panic(err)
	}
	bytes, err := promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_stored_bytes_total",
		Help: "Bytes added to the store, by area.",
	}, []string{"area"}))
	if err != nil {
		panic(err)
	}
	return &instrumented{Store: st, files: files, bytes: bytes}
}

// instrumented is a Store that counts what is added to it.
type instrumented struct {
	Store
	files, bytes *prometheus.CounterVec
}

func (s *instrumented) Put(ctx context.Context, f NewFile, r io.Reader) (Meta, error) {
	m, err := s.Store.Put(ctx, f, r)
	s.count(m, err)
	return m, err
}

func (s *instrumented) Adopt(ctx context.Context, f NewFile, path string) (Meta, error) {
	m, err := s.Store.Adopt(ctx, f, path)
	s.count(m, err)
	return m, err
}

func (s *instrumented) count(m Meta, err error) {
	if err != nil {
		return
	}
	s.files.WithLabelValues(string(m.Area)).Inc()
	s.bytes.WithLabelValues(string(m.Area)).Add(float64(m.Size))
}
