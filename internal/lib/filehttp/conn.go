package filehttp

import (
	"context"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// ConnContext is an http.Server.ConnContext that keeps each connection in
// the context of its requests, so that ServeFile can cork it. A server
// without it serves downloads uncorked.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connKey carries a request's connection in its context.
type connKey struct{}

// cork holds back the response's partial TCP segments (TCP_CORK) until the
// returned function is called, so that headers and a small file leave in
// one segment rather than two (nginx's tcp_nopush): net/http writes through
// a 4 KiB buffer, and a 4 KiB file and its headers take two writes. It
// returns nil when r's connection is unknown (no ConnContext), is not a
// socket (TLS) or takes no TCP_CORK; the caller must call what it returns,
// or the connection stays corked.
func cork(r *http.Request) func() {
	sc, ok := r.Context().Value(connKey{}).(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil || setCork(rc, true) != nil {
		return nil
	}
	return func() { setCork(rc, false) }
}

// writeStep is the most a download sends under one write deadline: a
// reader that takes a writeStep per WriteTimeout keeps its download, one
// that takes less is dropped. At the default of a minute that is 8.5 KiB/s.
const writeStep = 512 << 10

// extend moves the write deadline to WriteTimeout from now, before a write.
func (c *countingWriter) extend() {
	if c.rc != nil {
		c.rc.SetWriteDeadline(time.Now().Add(c.timeout))
	}
}

// finish sends what the response still holds back, under the write
// deadline, then uncorks the connection and lifts the deadline: the
// connection's next request, to whatever route, starts without one, as
// on a server without WriteTimeout.
func (c *countingWriter) finish(uncork func()) {
	if c.rc == nil && uncork == nil {
		return
	}
	c.extend()
	// Flush only an answer of declared length: flushing one of unknown
	// length would make it chunked, and a peer (nginx after
	// X-Accel-Redirect) could no longer keep the connection. Every answer
	// of ServeFile declares it but http.ServeContent's rare 416.
	if _, ok := c.Header()["Content-Length"]; ok {
		http.NewResponseController(c.ResponseWriter).Flush()
	}
	if uncork != nil {
		uncork()
	}
	if c.rc != nil {
		c.rc.SetWriteDeadline(time.Time{})
	}
}

// readFromInSteps is ReadFrom under a moving write deadline: it sends src
// writeStep bytes at a time, moving the deadline before each. A
// *io.LimitedReader (what http.ServeContent passes) is unwrapped into
// limited readers of its own reader, one level deep, as sendfile needs.
func (c *countingWriter) readFromInSteps(rf io.ReaderFrom, src io.Reader) (int64, error) {
	lr, limited := src.(*io.LimitedReader)
	r := src
	if limited {
		r = lr.R
	}
	var total int64
	for {
		step := int64(writeStep)
		if limited {
			step = min(step, lr.N)
		}
		if step <= 0 {
			return total, nil
		}
		c.extend()
		n, err := rf.ReadFrom(&io.LimitedReader{R: r, N: step})
		total += n
		if limited {
			lr.N -= n
		}
		if err != nil || n < step {
			return total, err
		}
	}
}
