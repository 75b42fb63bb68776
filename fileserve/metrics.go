package fileserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

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
	if m.downloads, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_downloads_total",
		Help: "Requests to /files/, by HTTP status.",
	}, []string{"status"})); err != nil {
		return nil, err
	}
	if m.downloadBytes, err = register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "agentura_download_bytes_total",
		Help: "Bytes of file content sent by /files/.",
	})); err != nil {
		return nil, err
	}
	if m.uploads, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
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

// register registers c with reg, or returns the collector of the same
// description registered before (two servers, or a restart of one within a
// process, share the counters).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("fileserve: register metrics: %w", err)
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
	files, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_files_stored_total",
		Help: "Files added to the store, by area.",
	}, []string{"area"}))
	if err != nil {
		panic(err)
	}
	bytes, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
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
