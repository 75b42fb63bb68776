package agentcore

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/quickget"
)

// filesPrefix is where downloads are served.
const filesPrefix = "/files/"

// downloadsFirst serves GET and HEAD of /files/ before the router: a
// download needs none of gin's context, middleware or routing, and on
// small files that work is a good part of the cost of a request (see
// docs/benchmarks.md). Everything else goes to router. The download keeps
// what the router's middleware gives every request: the request id, the
// log line at debug level, and a recovered panic is the server's (net/http
// logs it and closes the connection).
func (s *Service) downloadsFirst(router http.Handler) http.Handler {
	return &front{s: s, router: router}
}

// front is the handler of downloadsFirst.
type front struct {
	s      *Service
	router http.Handler
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, filesPrefix) || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		f.router.ServeHTTP(w, r)
		return
	}
	s := f.s
	id := requestID(r)
	w.Header()["X-Request-Id"] = []string{id}
	if uncork := cork(w, r); uncork != nil {
		defer uncork()
	}
	if !s.log.Enabled(r.Context(), slog.LevelDebug) {
		s.files.ServeFile(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
	start := time.Now()
	s.files.ServeFile(sw, r)
	s.log.LogAttrs(r.Context(), slog.LevelDebug, "http", slog.String("request_id", id),
		slog.String("client", s.proxies.clientAddr(r)), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.Int("status", sw.code), slog.Duration("duration", time.Since(start)))
}

// connKey carries a request's connection in its context (http.Server.ConnContext).
type connKey struct{}

// withConn is the agent's http.Server.ConnContext: it keeps the connection
// in the context, for cork.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// cork holds back the response's partial TCP segments (TCP_CORK) until the
// returned function has flushed the response, so that headers and a small
// file leave in one segment rather than two (nginx's tcp_nopush). net/http
// writes through a 4 KiB buffer: a 4 KiB file and its headers take two
// writes, which without the cork are two segments, each read and
// acknowledged on its own. It returns nil when the connection is not a
// socket of the agent's own server (a program mounting Handler on its
// server, TLS) or takes no TCP_CORK; the caller must call what it returns,
// or the connection stays corked. A connection the quick download path
// handed to net/http passes its socket on (syscall.Conn).
func cork(w http.ResponseWriter, r *http.Request) func() {
	sc, ok := r.Context().Value(connKey{}).(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil || quickget.SetCork(rc, true) != nil {
		return nil
	}
	return func() {
		// Flush what the response holds only when its length is declared:
		// flushing an answer of unknown length would make it chunked.
		if _, ok := w.Header()["Content-Length"]; ok {
			http.NewResponseController(w).Flush()
		}
		quickget.SetCork(rc, false)
	}
}

// statusWriter notes the status of a response for its log line.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController (and sendfile) the writer underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestIDPrefix is random per process; a counter follows it, so request
// ids are unique without reading random bytes per request.
var (
	requestIDPrefix = fileserve.NewID()[28:] // the random end of a UUID v7 (its start is the time)
	requestCounter  atomic.Uint64
)

// requestID is the caller's X-Request-Id (up to 64 bytes), or a new one.
func requestID(r *http.Request) string {
	if v := r.Header["X-Request-Id"]; len(v) > 0 && v[0] != "" && len(v[0]) <= 64 {
		return v[0]
	}
	return requestIDPrefix + strconv.FormatUint(requestCounter.Add(1), 16)
}
