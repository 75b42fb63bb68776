package ops

import (
	"context"
	"io"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/promreg"
	"github.com/prometheus/client_golang/prometheus"
)

// Instrument wraps st to count the files and bytes added to it per
// area: agentura_files_stored_total{area} and
// agentura_stored_bytes_total{area}. The wrapper has only the Store's
// methods and Unwrap: fileserve.As finds st's capabilities through it.
func Instrument(st fileserve.Store, reg prometheus.Registerer) (fileserve.Store, error) {
	files, err := promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_files_stored_total",
		Help: "Files added to the store, by area.",
	}, []string{"area"}))
	if err != nil {
		return nil, err
	}
	bytes, err := promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_stored_bytes_total",
		Help: "Bytes added to the store, by area.",
	}, []string{"area"}))
	if err != nil {
		return nil, err
	}
	return &instrumented{Store: st, files: files, bytes: bytes}, nil
}

// instrumented is a Store that counts what is added to it.
type instrumented struct {
	fileserve.Store
	files, bytes *prometheus.CounterVec
}

func (s *instrumented) Put(ctx context.Context, f fileserve.NewFile, r io.Reader) (fileserve.Meta, error) {
	m, err := s.Store.Put(ctx, f, r)
	s.count(m, err)
	return m, err
}

func (s *instrumented) Adopt(ctx context.Context, f fileserve.NewFile, path string) (fileserve.Meta, error) {
	m, err := s.Store.Adopt(ctx, f, path)
	s.count(m, err)
	return m, err
}

func (s *instrumented) count(m fileserve.Meta, err error) {
	if err != nil {
		return
	}
	s.files.WithLabelValues(string(m.Area)).Inc()
	s.bytes.WithLabelValues(string(m.Area)).Add(float64(m.Size))
}

// Unwrap returns the store counted, whose capabilities fileserve.As finds.
func (s *instrumented) Unwrap() fileserve.Store { return s.Store }
