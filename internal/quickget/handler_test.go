package quickget

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// rawExchange sends raw on a new connection to addr and returns everything
// the server sends until it closes or 1 s passes without a byte.
func rawExchange(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, raw)
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return string(out)
		}
	}
}

// misbehavingHandler answers in the ways the download handler never does
// but another handler behind the quick path might: its own framing headers,
// a length changed after WriteHeader, an invalid header name, its own
// Connection: close.
func misbehavingHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/files/te":
			// A handler that declares its own framing.
			w.Header().Set("Transfer-Encoding", "chunked")
			w.Write([]byte("hello"))
		case "/files/late-length":
			// Headers changed after WriteHeader: net/http ignores them.
			w.WriteHeader(http.StatusOK)
			w.Header().Set("Content-Length", "100000")
			w.Write(make([]byte, 100000))
		case "/files/changed-length":
			// Content-Length changed after WriteHeader, body as first declared.
			w.Header().Set("Content-Length", "5")
			w.WriteHeader(http.StatusOK)
			w.Header().Set("Content-Length", "10")
			w.Write([]byte("hello"))
		case "/files/handler-close":
			w.Header().Set("Connection", "close")
			w.Write([]byte("bye"))
		case "/files/bad-name":
			w.Header()["X-A\r\nInjected"] = []string{"yes"}
			w.Write([]byte("ok"))
		default:
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, r.Method+" "+r.URL.Path+" "+string(b))
		}
	})
}

// TestHandlerFraming: the quick path must never send both a
// Content-Length and Transfer-Encoding, nor a header name net/http would drop.
func TestHandlerFraming(t *testing.T) {
	plain, quick, _ := servers(t, misbehavingHandler(), nil)
	for _, path := range []string{"/files/te", "/files/late-length", "/files/bad-name"} {
		for name, addr := range map[string]string{"net/http": plain, "quick": quick} {
			resp := rawExchange(t, addr, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			head, _, _ := strings.Cut(resp, "\r\n\r\n")
			lower := strings.ToLower(head)
			if strings.Contains(lower, "content-length:") && strings.Contains(lower, "transfer-encoding:") {
				t.Errorf("%s %s: both Content-Length and Transfer-Encoding:\n%s", name, path, head)
			}
			if strings.Contains(head, "\r\nInjected:") {
				t.Errorf("%s %s: header injected through a header name:\n%s", name, path, head)
			}
		}
	}
}

// TestServeAfterShutdown: like http.Server, Serve after (or racing
// with) Shutdown returns ErrServerClosed instead of accepting forever.
func TestServeAfterShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	q := New("/files/", &http.Server{Handler: misbehavingHandler(), ErrorLog: log.New(io.Discard, "", 0)})
	q.Shutdown(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Serve(ln) }()
	select {
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve after Shutdown: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Serve after Shutdown did not return: it accepts (and closes) connections forever")
	}
}

// TestIdleWithoutIdleTimeout: with ReadHeaderTimeout set but no
// IdleTimeout (nor ReadTimeout) an idle connection stays open, on both
// paths: the previous request's header deadline does not linger.
func TestIdleWithoutIdleTimeout(t *testing.T) {
	for name, addr := range bothTweaked(t, func(s *http.Server) { s.ReadHeaderTimeout = 200 * time.Millisecond }) {
		t.Run(name, func(t *testing.T) { keepAliveAfterIdle(t, addr) })
	}
}

func keepAliveAfterIdle(t *testing.T, addr string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := range 2 {
		if _, err := io.WriteString(c, "GET /files/x HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on a keep-alive connection idle for 500 ms: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		time.Sleep(500 * time.Millisecond)
	}
}

// TestReadTimeoutBoundsHead: with ReadHeaderTimeout 0, ReadTimeout
// bounds the head on both paths, IdleTimeout set or not: a head trickled
// in does not keep the connection forever.
func TestReadTimeoutBoundsHead(t *testing.T) {
	for name, addr := range bothTweaked(t, func(s *http.Server) {
		s.ReadTimeout = 300 * time.Millisecond
		s.IdleTimeout = time.Minute
	}) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /files/x HTTP/1.1\r\nHo")
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		// net/http answers 408 and closes; either way the server must act.
		if _, err := c.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s: slow head with ReadTimeout 300ms still open after 3 s", name)
		}
	}
}

// bothTweaked starts misbehavingHandler behind net/http alone and behind the
// quick path (servers), both servers tweaked alike.
func bothTweaked(t *testing.T, tweak func(*http.Server)) map[string]string {
	plain, quick, _ := servers(t, misbehavingHandler(), tweak)
	return map[string]string{"net/http": plain, "quick": quick}
}

// TestShutdownRightAfterServe is agentcore.Service.Serve with a
// context already done: go Serve(ln), then Shutdown at once. Serve must
// return ErrServerClosed.
func TestShutdownRightAfterServe(t *testing.T) {
	hung := 0
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		q := New("/files/", &http.Server{Handler: misbehavingHandler(), ErrorLog: log.New(io.Discard, "", 0)})
		done := make(chan error, 1)
		go func() { done <- q.Serve(ln) }()
		q.Shutdown(context.Background())
		select {
		case <-done:
		case <-time.After(200 * time.Millisecond):
			hung++
		}
		ln.Close() // lets a hung Serve go
	}
	if hung > 0 {
		t.Errorf("Serve did not return after Shutdown in %d of 20 runs", hung)
	}
}

// TestChangedLengthKeepsAlive: a Content-Length changed after
// WriteHeader must not go out with the connection kept open: the client
// waits for bytes that belong to the next answer.
func TestChangedLengthKeepsAlive(t *testing.T) {
	for name, addr := range bothTweaked(t, func(*http.Server) {}) {
		resp := rawExchange(t, addr, "GET /files/changed-length HTTP/1.1\r\nHost: x\r\n\r\nGET /files/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		r, err := http.ReadResponse(bufio.NewReader(strings.NewReader(resp)), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		body, _ := io.ReadAll(r.Body)
		if string(body) != "hello" {
			t.Errorf("%s: first body %q (Content-Length %s): the next answer's bytes were taken as this one's", name, body, r.Header.Get("Content-Length"))
		}
	}
}

// TestHandlerConnectionClose: a handler's Connection: close closes
// the connection after the answer, as net/http does.
func TestHandlerConnectionClose(t *testing.T) {
	for name, addr := range bothTweaked(t, func(*http.Server) {}) {
		resp := rawExchange(t, addr, "GET /files/handler-close HTTP/1.1\r\nHost: x\r\n\r\nGET /files/x HTTP/1.1\r\nHost: x\r\n\r\n")
		if n := strings.Count(resp, "HTTP/1.1 200"); n != 1 {
			t.Errorf("%s: %d answers after a handler's Connection: close, want 1", name, n)
		}
	}
}
