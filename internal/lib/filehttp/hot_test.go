package filehttp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentura/agentura/fileserve"
)

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// BenchmarkServeFileHotPath measures the handler's own work per small
// download, without a network: what the server adds to a request.
func BenchmarkServeFileHotPath(b *testing.B) {
	env := newTestEnv(b, "mux", nil)
	m := env.put(b, fileserve.Outputs, "alice", "4k.bin", bytes.Repeat([]byte("x"), 4096))
	r := httptest.NewRequest("GET", env.signedURL(b, m), nil)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		env.srv.ServeFile(w, r)
	}
}
