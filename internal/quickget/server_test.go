package quickget

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testHandler answers what the tests ask of both paths alike; X-Path says
// which path served the request.
func testHandler(t *testing.T, release <-chan struct{}) http.Handler {
	content := bytes.Repeat([]byte("0123456789abcdef"), 20_000) // 320,000 bytes
	path := filepath.Join(t.TempDir(), "content.bin")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	modTime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, quick := w.(*response); quick {
			w.Header().Set("X-Path", "quick")
		} else {
			w.Header().Set("X-Path", "net/http")
		}
		switch r.URL.Path {
		case "/files/small":
			w.Header().Set("Content-Length", "5")
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("hello"))
		case "/files/nolength":
			w.Write([]byte("<html>no length declared</html>"))
		case "/files/status-then-body":
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte("%PDF-1.7 sniffed after an explicit status"))
		case "/files/big-nolength":
			for range 10 {
				w.Write(bytes.Repeat([]byte("x"), 20_000))
			}
		case "/files/content", "/other-content":
			f, err := os.Open(path)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			w.Header().Set("Etag", `"v1"`)
			http.ServeContent(w, r, "content.bin", modTime, f)
		case "/files/flushed":
			w.Write([]byte("first"))
			http.NewResponseController(w).Flush()
			w.Write([]byte("second"))
		case "/files/empty":
		case "/files/not-modified":
			w.WriteHeader(http.StatusNotModified)
		case "/files/error":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, "{\"error\":%q}\n", r.Header.Get("X-Echo"))
		case "/files/short":
			w.Header().Set("Content-Length", "10")
			w.Write([]byte("12345"))
		case "/files/panic":
			panic("on purpose")
		case "/files/abort":
			panic(http.ErrAbortHandler)
		case "/files/wait":
			<-release
			w.Write([]byte("done"))
		default:
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %q", r.Method, r.URL.Path, b)
		}
	})
}

// servers starts the handler behind net/http alone and behind the quick
// path, both servers tweaked alike, and returns their addresses.
func servers(t *testing.T, h http.Handler, tweak func(*http.Server)) (plain, quick string, q *Server) {
	t.Helper()
	quiet := log.New(io.Discard, "", 0)
	lnA, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &http.Server{Handler: h, ErrorLog: quiet}
	if tweak != nil {
		tweak(a)
	}
	go a.Serve(lnA)
	t.Cleanup(func() { a.Close() })
	lnB, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &http.Server{Handler: h, ErrorLog: quiet}
	if tweak != nil {
		tweak(b)
	}
	q = New("/files/", b)
	served := make(chan error, 1)
	go func() { served <- q.Serve(lnB) }()
	t.Cleanup(func() {
		q.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve returned %v, want http.ErrServerClosed", err)
		}
	})
	return lnA.Addr().String(), lnB.Addr().String(), q
}

// answer is a response as the comparison sees it.
type answer struct {
	Status int
	Header http.Header
	Body   string
	Err    string
}

// exchange sends raw on a new connection and reads one response per
// method in methods, then reports whether the connection is still open.
func exchange(t *testing.T, addr, raw string, methods ...string) ([]answer, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var out []answer
	for _, m := range methods {
		resp, err := http.ReadResponse(br, &http.Request{Method: m})
		if err != nil {
			out = append(out, answer{Err: "no response"})
			return out, false
		}
		body, err := io.ReadAll(resp.Body)
		a := answer{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
		if err != nil {
			a.Err = "body cut short"
		}
		resp.Header.Del("Date")
		out = append(out, a)
	}
	// Still open: another request is answered.
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "GET /files/small HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return out, false
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return out, false
	}
	resp.Body.Close()
	return out, true
}

func get(path string, headers ...string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: x\r\n" + strings.Join(headers, "") + "\r\n"
}

// TestSameAnswers sends the same bytes to net/http and to the quick path:
// status, headers (but Date and X-Path) and body are the same, and so is
// whether the connection stays open.
func TestSameAnswers(t *testing.T) {
	release := make(chan struct{})
	close(release)
	plain, quick, _ := servers(t, testHandler(t, release), nil)
	for _, c := range []struct {
		name, raw string
		methods   []string
		quick     bool // the quick path must have answered (X-Path)
	}{
		{name: "small", raw: get("/files/small"), methods: []string{"GET"}, quick: true},
		{name: "no length", raw: get("/files/nolength"), methods: []string{"GET"}, quick: true},
		{name: "status then body", raw: get("/files/status-then-body"), methods: []string{"GET"}, quick: true},
		{name: "HEAD status then body", raw: "HEAD /files/status-then-body HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"HEAD"}, quick: true},
		{name: "big without length", raw: get("/files/big-nolength"), methods: []string{"GET"}, quick: true},
		{name: "flushed", raw: get("/files/flushed"), methods: []string{"GET"}, quick: true},
		{name: "content", raw: get("/files/content"), methods: []string{"GET"}, quick: true},
		{name: "HEAD content", raw: "HEAD /files/content HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"HEAD"}, quick: true},
		{name: "range", raw: get("/files/content", "Range: bytes=100-199\r\n"), methods: []string{"GET"}, quick: true},
		{name: "suffix range", raw: get("/files/content", "Range: bytes=-7\r\n"), methods: []string{"GET"}, quick: true},
		{name: "two ranges", raw: get("/files/content", "Range: bytes=0-1,10-12\r\n"), methods: []string{"GET"}, quick: true},
		{name: "bad range", raw: get("/files/content", "Range: bytes=999999-\r\n"), methods: []string{"GET"}, quick: true},
		{name: "if-none-match", raw: get("/files/content", "If-None-Match: \"v1\"\r\n"), methods: []string{"GET"}, quick: true},
		{name: "if-modified-since", raw: get("/files/content", "If-Modified-Since: Fri, 02 Jan 2026 03:04:05 GMT\r\n"), methods: []string{"GET"}, quick: true},
		{name: "empty", raw: get("/files/empty"), methods: []string{"GET"}, quick: true},
		{name: "HEAD empty", raw: "HEAD /files/empty HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"HEAD"}, quick: true},
		{name: "HEAD error", raw: "HEAD /files/error HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"HEAD"}, quick: true},
		{name: "not modified", raw: get("/files/not-modified"), methods: []string{"GET"}, quick: true},
		{name: "error", raw: get("/files/error", "X-Echo: a\tb\r\n"), methods: []string{"GET"}, quick: true},
		{name: "short body", raw: get("/files/short"), methods: []string{"GET"}, quick: true},
		{name: "panic", raw: get("/files/panic"), methods: []string{"GET"}},
		{name: "abort", raw: get("/files/abort"), methods: []string{"GET"}},
		{name: "connection close", raw: get("/files/small", "Connection: close\r\n"), methods: []string{"GET"}, quick: true},
		{name: "pipelined", raw: get("/files/small") + get("/files/nolength") + "HEAD /files/content HTTP/1.1\r\nHost: x\r\n\r\n",
			methods: []string{"GET", "GET", "HEAD"}, quick: true},
		{name: "POST to files", raw: "POST /files/small HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi", methods: []string{"POST"}},
		{name: "HTTP/1.0", raw: "GET /files/small HTTP/1.0\r\n\r\n", methods: []string{"GET"}},
		{name: "no host", raw: "GET /files/small HTTP/1.1\r\n\r\n", methods: []string{"GET"}},
		{name: "folded header", raw: get("/files/small", "X-A: 1\r\n 2\r\n"), methods: []string{"GET"}},
		{name: "bad target", raw: "GET /files/%zz HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"GET"}},
		{name: "other path", raw: "POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", methods: []string{"POST"}},
		{name: "other then files", raw: "POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" + get("/files/small"),
			methods: []string{"POST", "GET"}},
		{name: "large head", raw: get("/files/small", "X-Big: "+strings.Repeat("b", 5000)+"\r\n"), methods: []string{"GET"}},
		{name: "bare LF", raw: "GET /files/small HTTP/1.1\nHost: x\n\n", methods: []string{"GET"}},
		{name: "garbage", raw: "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", methods: []string{"GET"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, wantOpen := exchange(t, plain, c.raw, c.methods...)
			got, gotOpen := exchange(t, quick, c.raw, c.methods...)
			if len(got) != len(want) {
				t.Fatalf("quick path: %d answers, net/http %d", len(got), len(want))
			}
			for i := range want {
				if c.quick && got[i].Err == "" && got[i].Header.Get("X-Path") != "quick" {
					t.Errorf("answer %d came from %q, want the quick path", i, got[i].Header.Get("X-Path"))
				}
				for _, a := range []*answer{&want[i], &got[i]} {
					if _, b, ok := strings.Cut(a.Header.Get("Content-Type"), "boundary="); ok {
						a.Body = strings.ReplaceAll(a.Body, b, "BOUNDARY") // random in each answer
						a.Header.Set("Content-Type", strings.ReplaceAll(a.Header.Get("Content-Type"), b, "BOUNDARY"))
					}
					if a.Header != nil {
						a.Header.Del("X-Path")
					}
				}
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("answer %d:\nquick path %+v\nnet/http   %+v", i, got[i], want[i])
				}
			}
			if gotOpen != wantOpen {
				t.Errorf("connection open after: quick path %v, net/http %v", gotOpen, wantOpen)
			}
		})
	}
}

// TestHandOver: a connection that starts on the quick path and then sends
// a request for net/http stays with net/http, which answers it and the
// downloads after it.
func TestHandOver(t *testing.T) {
	_, quick, _ := servers(t, testHandler(t, nil), nil)
	raw := get("/files/small") + "POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" + get("/files/content", "Range: bytes=0-3\r\n")
	got, open := exchange(t, quick, raw, "GET", "POST", "GET")
	paths := []string{got[0].Header.Get("X-Path"), got[1].Header.Get("X-Path"), got[2].Header.Get("X-Path")}
	if !reflect.DeepEqual(paths, []string{"quick", "net/http", "net/http"}) || got[1].Body != `POST /other "abc"` ||
		got[2].Body != "0123" || !open {
		t.Errorf("answers %+v from %v, open %v", got, paths, open)
	}
}

// TestBigFile: a file larger than the buffer goes out whole, after the
// headers, and the connection carries on.
func TestBigFile(t *testing.T) {
	_, quick, _ := servers(t, testHandler(t, nil), nil)
	got, open := exchange(t, quick, get("/files/content")+get("/files/small"), "GET", "GET")
	if len(got) != 2 || len(got[0].Body) != 320_000 || got[0].Body[:16] != "0123456789abcdef" || got[1].Body != "hello" || !open {
		t.Errorf("answers: %d, open %v", len(got), open)
	}
}

// TestTimeouts: a head that does not arrive within ReadHeaderTimeout, and
// a connection idle longer than IdleTimeout, are closed.
func TestTimeouts(t *testing.T) {
	_, quick, _ := servers(t, testHandler(t, nil), func(s *http.Server) {
		s.ReadHeaderTimeout = 200 * time.Millisecond
		s.IdleTimeout = 300 * time.Millisecond
	})
	for name, raw := range map[string]string{"slow head": "GET /files/small HTTP/1.1\r\nHo", "idle": ""} {
		c, err := net.Dial("tcp", quick)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, raw)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		start := time.Now()
		n, err := c.Read(make([]byte, 1))
		if n != 0 || err != io.EOF || time.Since(start) > 3*time.Second {
			t.Errorf("%s: read %d, %v after %v; want the server to close", name, n, err, time.Since(start))
		}
		c.Close()
	}
}

// TestShutdown: Shutdown closes idle connections at once and lets a
// request in flight finish, with Connection: close.
func TestShutdown(t *testing.T) {
	release := make(chan struct{})
	_, quick, q := servers(t, testHandler(t, release), nil)
	idle, err := net.Dial("tcp", quick)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := net.Dial("tcp", quick)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	io.WriteString(busy, get("/files/wait"))
	time.Sleep(100 * time.Millisecond) // the request is in the handler
	done := make(chan error, 1)
	go func() { done <- q.Shutdown(context.Background()) }()

	idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := idle.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("idle connection: read %d, %v; want it closed", n, err)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	busy.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "done" || !resp.Close {
		t.Errorf("request in flight: %q, close %v", body, resp.Close)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if _, err := net.DialTimeout("tcp", quick, time.Second); err == nil {
		t.Error("still accepting after Shutdown")
	}
}
