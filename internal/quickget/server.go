// Package quickget serves the simplest requests under one path prefix —
// GET and HEAD over HTTP/1.1 without a body, every header line well formed
// — on connections it reads itself, and hands every other connection to a
// net/http server. The agent uses it for /files/: a download of a small
// file costs mostly what net/http does per request (its buffered reader and
// writer, header maps, two writes), and the quick path does the same work
// in one read, one write and a few small allocations.
//
// Both paths call the same http.Handler: the quick path changes only how a
// request is read and its answer framed. A request it does not fully
// understand (another method or path, HTTP/1.0, a body, an odd header, a
// head larger than its buffer) goes to net/http with the bytes already
// read, and the connection stays with net/http from then on, so anything
// unusual is judged by net/http's rules. It serves plain-text listeners
// only: a TLS connection must be net/http's from its first byte.
package quickget

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// readBufBytes is the read buffer of a connection; a request head that
// does not fit goes to net/http, whose limit is larger.
const readBufBytes = 4 << 10

// Server is the quick path in front of a net/http server.
type Server struct {
	prefix string
	srv    *http.Server

	ln      net.Listener
	handoff *handoffListener
	closing atomic.Bool

	mu    sync.Mutex
	conns map[*conn]struct{}
	done  chan struct{} // closed when the last quick connection ended during shutdown
}

// New returns a Server serving GET and HEAD under prefix (which must start
// and end with "/") with srv.Handler, and handing the rest to srv. The
// quick path applies srv's ReadHeaderTimeout, IdleTimeout and WriteTimeout
// and logs handler panics to srv.ErrorLog; it does not call srv's
// ConnState or ConnContext hooks (those see only the connections handed
// over).
func New(prefix string, srv *http.Server) *Server {
	return &Server{prefix: prefix, srv: srv, conns: map[*conn]struct{}{}}
}

// Serve accepts connections on ln until Shutdown or Close, serving quick
// requests itself and running srv.Serve for the rest. Like http.Server it
// returns http.ErrServerClosed after Shutdown or Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing.Load() {
		// Shutdown or Close came first (they may race with Serve's start):
		// like http.Server, do not serve.
		s.mu.Unlock()
		ln.Close()
		return http.ErrServerClosed
	}
	s.ln = ln
	s.handoff = &handoffListener{addr: ln.Addr(), conns: make(chan net.Conn), done: make(chan struct{})}
	s.mu.Unlock()
	httpErr := make(chan error, 1)
	go func() { httpErr <- s.srv.Serve(s.handoff) }()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return http.ErrServerClosed
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				// Out of descriptors or a transient failure: wait, as net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.logf("quickget: accept error: %v; retrying in %v", err, backoff)
				time.Sleep(backoff)
				continue
			}
			s.handoff.Close()
			<-httpErr
			return err
		}
		backoff = 0
		qc := &conn{s: s, c: c}
		if !s.track(qc, true) {
			c.Close()
			continue
		}
		go qc.serve()
	}
}

// Shutdown stops accepting, closes idle connections, lets the requests in
// flight finish and shuts srv down, all within ctx; then it closes what is
// left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.beginClose()
	err := s.srv.Shutdown(ctx)
	select {
	case <-s.quiet():
	case <-ctx.Done():
		s.closeAll()
		if err == nil {
			err = ctx.Err()
		}
	}
	return err
}

// Close closes the listener and every connection at once.
func (s *Server) Close() error {
	s.beginClose()
	err := s.srv.Close()
	s.closeAll()
	return err
}

// beginClose marks the server closing, stops accepting and closes the
// quick connections that wait for a request.
func (s *Server) beginClose() {
	if s.closing.Swap(true) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		s.ln.Close()
	}
	for qc := range s.conns {
		if qc.idle.Load() {
			qc.c.Close()
		}
	}
}

// quiet returns a channel closed once no quick connection is left.
func (s *Server) quiet() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
		if len(s.conns) == 0 {
			close(s.done)
		}
	}
	return s.done
}

// closeAll closes every quick connection.
func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for qc := range s.conns {
		qc.c.Close()
	}
}

// track adds (add true) or removes a quick connection; it refuses to add
// one while closing.
func (s *Server) track(qc *conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.closing.Load() {
			return false
		}
		s.conns[qc] = struct{}{}
		return true
	}
	delete(s.conns, qc)
	if len(s.conns) == 0 && s.done != nil {
		select {
		case <-s.done:
		default:
			close(s.done)
		}
	}
	return true
}

// logf logs to srv.ErrorLog, or the standard logger.
func (s *Server) logf(format string, args ...any) {
	if s.srv.ErrorLog != nil {
		s.srv.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// readers pools the read buffers of quick connections.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufBytes) }}

// conn is one connection on the quick path.
type conn struct {
	s    *Server
	c    net.Conn
	idle atomic.Bool // waiting for a request: Shutdown may close it
}

// serve answers quick requests until the connection ends or a request
// needs net/http.
func (qc *conn) serve() {
	s, c := qc.s, qc.c
	handedOver := false
	br := readers.Get().(*bufio.Reader)
	br.Reset(c)
	ctx, cancel := context.WithCancel(context.WithValue(context.WithValue(context.Background(),
		http.ServerContextKey, s.srv), http.LocalAddrContextKey, c.LocalAddr()))
	defer func() {
		cancel()
		if !handedOver {
			c.Close()
			br.Reset(nil)
			readers.Put(br)
		}
		s.track(qc, false)
	}()
	base := (&http.Request{}).WithContext(ctx)
	remote := c.RemoteAddr().String()
	w := &response{conn: c, header: make(http.Header, 12)}
	for {
		qc.idle.Store(true)
		if s.closing.Load() {
			return
		}
		if d := s.idleTimeout(); d > 0 {
			c.SetReadDeadline(time.Now().Add(d))
		} else {
			c.SetReadDeadline(time.Time{}) // not the last head's deadline
		}
		if _, err := br.Peek(1); err != nil {
			return // closed, idle too long, or shut down
		}
		qc.idle.Store(false)
		if d := s.readHeaderTimeout(); d > 0 {
			c.SetReadDeadline(time.Now().Add(d))
		} else {
			c.SetReadDeadline(time.Time{})
		}
		n, err := readHead(br)
		if err != nil {
			return // the client went away or was too slow: net/http answers neither
		}
		h, ok := head{}, false
		if n > 0 {
			b, _ := br.Peek(n)
			h, ok = parseHead(b, s.prefix)
		}
		if !ok {
			handedOver = s.handoff.give(&handedConn{Conn: c, r: br})
			return
		}
		br.Discard(n)
		if d := s.srv.WriteTimeout; d > 0 {
			c.SetWriteDeadline(time.Now().Add(d))
		}
		r := new(http.Request)
		*r = *base
		r.Method, r.URL, r.RequestURI = h.method, h.url, h.target
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
		r.Header, r.Host, r.RemoteAddr = h.header, h.host, remote
		r.Body, r.Close = http.NoBody, h.close
		w.reset(h.method == http.MethodHead, h.close || s.closing.Load())
		ok = qc.handle(w, r)
		if s.closing.Load() {
			w.close = true // shutting down: this answer is the last
		}
		if !ok || !w.finish() {
			return
		}
	}
}

// handle runs the handler, and reports false (the connection must close)
// when it panicked.
func (qc *conn) handle(w *response, r *http.Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			ok = false
			w.err = errPanicked
			if p != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				qc.s.logf("http: panic serving %v: %v\n%s", r.RemoteAddr, p, buf)
			}
		}
	}()
	qc.s.srv.Handler.ServeHTTP(w, r)
	return true
}

var errPanicked = errors.New("quickget: the handler panicked")

// idleTimeout is how long a connection may wait for its next request, as
// net/http reckons it.
func (s *Server) idleTimeout() time.Duration {
	if s.srv.IdleTimeout != 0 {
		return s.srv.IdleTimeout
	}
	return s.srv.ReadTimeout
}

// readHeaderTimeout is how long a request head may take, as net/http
// reckons it.
func (s *Server) readHeaderTimeout() time.Duration {
	if s.srv.ReadHeaderTimeout > 0 {
		return s.srv.ReadHeaderTimeout
	}
	return s.srv.ReadTimeout
}

// readHead reads until br holds a whole request head, and returns its
// length; 0 when it does not fit the buffer (net/http takes it).
func readHead(br *bufio.Reader) (int, error) {
	for {
		b, _ := br.Peek(br.Buffered())
		if n := headEnd(b); n > 0 {
			return n, nil
		}
		if br.Buffered() == br.Size() {
			return 0, nil
		}
		if _, err := br.Peek(br.Buffered() + 1); err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return 0, nil
			}
			return 0, err
		}
	}
}

// handoffListener gives net/http the connections the quick path passes on.
type handoffListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// Accept implements net.Listener.
func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, fmt.Errorf("quickget: %w", net.ErrClosed)
	}
}

// Close implements net.Listener; the Server closes the real listener.
func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *handoffListener) Addr() net.Addr { return l.addr }

// give passes c to net/http, and reports false (having closed c) when
// net/http stopped accepting.
func (l *handoffListener) give(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		c.Close()
		return false
	}
}

// handedConn is a connection net/http takes over: the bytes the quick path
// read ahead come first.
type handedConn struct {
	net.Conn
	r *bufio.Reader
}

// Read implements net.Conn: what was read ahead, then the connection.
func (c *handedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// ReadFrom lets net/http send files with sendfile, as on a plain TCP connection.
func (c *handedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// CloseWrite lets net/http close its side gracefully, as on a plain TCP connection.
func (c *handedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// SyscallConn gives the socket's options (TCP_CORK) as on a plain TCP connection.
func (c *handedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}
