package connlimit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// serve runs a server of l on loopback; a request to /block waits until
// release is closed. It returns the address.
func serve(t *testing.T, l *Limiter, release chan struct{}) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/block" {
				<-release
			}
			io.WriteString(w, "ok")
		}),
		ReadHeaderTimeout: time.Minute,
		ConnState:         l.ConnState,
	}
	go srv.Serve(l.Listener(ln))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// dial opens a connection that sends nothing yet.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends GET path on c and reads the answer; "" when the server closed c.
func get(c net.Conn, path string) string {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return ""
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// closed reports whether the server closed c (a read ends at once).
func closed(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !strings.Contains(err.Error(), "timeout")
}

// waitOpen waits until l counts n connections.
func waitOpen(t *testing.T, l *Limiter, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); l.Open() != n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want %d", l.Open(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A client at its cap loses its oldest silent connection to a new one; the
// new one is served.
func TestClientCapEvictsOldestWaiting(t *testing.T) {
	var shed []string
	l := New(Config{PerClient: 3, OnShed: func(a, lim string) { shed = append(shed, a+" "+lim) }})
	addr := serve(t, l, nil)
	var silent []net.Conn
	for range 3 {
		silent = append(silent, dial(t, addr))
		waitOpen(t, l, len(silent))
	}
	fresh := dial(t, addr)
	if got := get(fresh, "/"); got != "ok" {
		t.Fatalf("the new connection got %q, want ok", got)
	}
	if !closed(silent[0]) {
		t.Error("the oldest silent connection is still open")
	}
	for _, c := range silent[1:] {
		if closed(c) {
			t.Error("a younger silent connection was closed")
		}
	}
	if len(shed) != 1 || shed[0] != "evicted client" {
		t.Errorf("shed %v, want [evicted client]", shed)
	}
}

// When every connection of the client is busy with a request, a new one is
// closed as it comes; once they are done, a new one is served again.
func TestClientCapRefusesWhenAllBusy(t *testing.T) {
	l := New(Config{PerClient: 2})
	release := make(chan struct{})
	addr := serve(t, l, release)
	done := make(chan string, 2)
	for range 2 {
		c := dial(t, addr)
		go func() { done <- get(c, "/block") }()
	}
	waitOpen(t, l, 2)
	time.Sleep(100 * time.Millisecond) // both requests read: the connections are active
	if got := get(dial(t, addr), "/"); got != "" {
		t.Errorf("a third connection while two are busy got %q, want it closed", got)
	}
	close(release)
	for range 2 {
		if got := <-done; got != "ok" {
			t.Errorf("a busy request got %q", got)
		}
	}
	if got := get(dial(t, addr), "/"); got != "ok" {
		t.Errorf("a connection after the busy ones ended got %q, want ok", got)
	}
}

// The total cap makes room the same way, over every client; an exempt
// address (a trusted proxy) has no per-client cap.
func TestTotalCapAndExempt(t *testing.T) {
	l := New(Config{Max: 4, PerClient: 1, Exempt: func(ip netip.Addr) bool { return ip.IsLoopback() }})
	addr := serve(t, l, nil)
	var silent []net.Conn
	for range 4 {
		silent = append(silent, dial(t, addr))
		waitOpen(t, l, len(silent))
	}
	if got := get(dial(t, addr), "/"); got != "ok" {
		t.Fatalf("a fifth connection got %q, want ok", got)
	}
	if !closed(silent[0]) {
		t.Error("the oldest silent connection is still open")
	}
	if closed(silent[1]) {
		t.Error("a younger silent connection was closed")
	}
}
