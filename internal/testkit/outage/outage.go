// Package outage is an HTTP server a test takes through a dependency's
// outage, as the code under test meets it: serving (its handler answers),
// down (its listener closed: connections are refused; Up opens it again on
// the same port), hanging (a request gets no answer until its client gives
// up), failing (503, with a body naming an internal address the code under
// test must not repeat) or garbling (200 application/json that is not
// JSON). It counts the requests that reach it, by path, in every mode.
package outage

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Mode is how a server that takes connections answers.
type Mode int32

// The modes of a server that is up.
const (
	Serving  Mode = iota // the handler answers
	Hanging              // no answer until the client gives up
	Failing              // 503 naming FailingAddress
	Garbling             // 200 application/json that is not JSON
)

// String names the mode, for a test's messages.
func (m Mode) String() string {
	switch m {
	case Serving:
		return "serving"
	case Hanging:
		return "hanging"
	case Failing:
		return "failing (503)"
	case Garbling:
		return "garbling (not JSON)"
	}
	return fmt.Sprintf("Mode(%d)", int32(m))
}

// FailingAddress is the internal address a failing server's 503 names:
// an answer of the code under test that repeats it leaks its dependency's
// details.
const FailingAddress = "10.20.30.40"

// Server is a loopback HTTP server whose outage a test turns.
type Server struct {
	handler  http.Handler
	addr     string // host:port, the same across Down and Up
	mode     atomic.Int32
	release  chan struct{} // closed at the end: hanging requests return
	requests sync.Map      // path → *atomic.Int64

	mu  sync.Mutex
	srv *http.Server
}

// Start serves h on a loopback port until the test ends.
func Start(tb testing.TB, h http.Handler) *Server {
	tb.Helper()
	s := &Server{handler: h, addr: "127.0.0.1:0", release: make(chan struct{})}
	s.Up(tb)
	tb.Cleanup(func() {
		close(s.release)
		s.Down()
	})
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// URL is the server's base URL, http://host:port.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Up takes connections again, on the same port.
func (s *Server) Up(tb testing.TB) {
	tb.Helper()
	ln, err := net.Listen("tcp", s.Addr())
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.addr, s.srv = ln.Addr().String(), srv
	s.mu.Unlock()
	go srv.Serve(ln)
}

// Down closes the listener and every connection: the next request is
// refused.
func (s *Server) Down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.srv.Close()
}

// Set makes the server answer in mode m while it is up.
func (s *Server) Set(m Mode) { s.mode.Store(int32(m)) }

// Requests is how many requests for path reached the server, in any mode.
func (s *Server) Requests(path string) int64 {
	if n, ok := s.requests.Load(path); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	n, _ := s.requests.LoadOrStore(r.URL.Path, &atomic.Int64{})
	n.(*atomic.Int64).Add(1)
	switch Mode(s.mode.Load()) {
	case Hanging:
		select {
		case <-s.release:
		case <-r.Context().Done():
		}
	case Failing:
		http.Error(w, fmt.Sprintf("the backing store at %s:5432 is down", FailingAddress), http.StatusServiceUnavailable)
	case Garbling:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "<html>maintenance</html>")
	default:
		s.handler.ServeHTTP(w, r)
	}
}
