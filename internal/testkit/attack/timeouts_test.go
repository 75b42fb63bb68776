package attack

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// E15 (issue 30): every route keeps net/http's timeouts — the first byte
// and the headers of a request within AGENT_HEADER_TIMEOUT, a connection
// idle between requests for AGENT_IDLE_TIMEOUT —, a download that its
// client stops reading is dropped after AGENT_WRITE_TIMEOUT, and idle
// connections cannot take every slot: the quick download path kept a silent
// connection for 2 minutes, and 300 of them stopped /healthz.

const (
	headerTimeout = time.Second
	idleTimeout   = 2 * time.Second
	writeTimeout  = 2 * time.Second
	// slack is what a loaded machine may add to a timeout.
	slack = 3 * time.Second
)

// timedAgent is a file agent with short timeouts.
func timedAgent(t *testing.T, more ...string) *mcptest.Agent {
	env := append([]string{"AGENT_DATA_DIR=" + t.TempDir(), "AGENT_SIGNING_KEY=" + signingKey, "AGENT_MCP_STATELESS=true",
		"AGENT_HEADER_TIMEOUT=" + headerTimeout.String(), "AGENT_IDLE_TIMEOUT=" + idleTimeout.String(),
		"AGENT_WRITE_TIMEOUT=" + writeTimeout.String(), fmt.Sprintf("AGENT_MAX_UPLOAD_BYTES=%d", 80<<20), "AGENT_OWNER_QUOTA_BYTES=0"}, more...)
	return mcptest.StartAgent(t, fileagentBinary(t), env...)
}

// rawDial opens a TCP connection to the agent at base.
func rawDial(t *testing.T, base string) net.Conn {
	t.Helper()
	u, _ := url.Parse(base)
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedAfter waits for the server to close c, reading (and discarding)
// whatever comes, and returns how long that took from since; it fails the
// test when c is still open after limit.
func closedAfter(t *testing.T, c net.Conn, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	c.SetReadDeadline(since.Add(limit))
	_, err := io.Copy(io.Discard, c)
	took := time.Since(since)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("connection still open %v later", took.Round(time.Millisecond))
	}
	return took
}

// requests are one request to each route, as raw HTTP/1.1 (keep-alive).
func requests(t *testing.T, a *mcptest.Agent) map[string]string {
	r, fileURL := upload(t, a, "", "f.txt", []byte("hello"))
	status(t, r, http.StatusCreated)
	fu, _ := url.Parse(fileURL)
	host := strings.TrimPrefix(a.URL, "http://")
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	return map[string]string{
		"/healthz": "GET /healthz HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
		"/readyz":  "GET /readyz HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
		"/metrics": "GET /metrics HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
		"/files/":  "GET " + fu.RequestURI() + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
		"/mcp": fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"MCP-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", len(ping), ping),
		"/uploads": "POST /uploads HTTP/1.1\r\nHost: " + host + "\r\nX-Filename: u.txt\r\nContent-Length: 2\r\n\r\nhi",
		"/nowhere": "GET /nowhere HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
	}
}

func TestE15SameTimeoutsOnEveryRoute(t *testing.T) {
	a := timedAgent(t)
	defer a.Stop(t)
	reqs := requests(t, a)

	t.Run("first byte", func(t *testing.T) {
		// An agent whose idle timeout lies far past the limit checked, so
		// that only the header timeout can close the connection in time.
		quiet := timedAgent(t, "AGENT_IDLE_TIMEOUT=30s")
		defer quiet.Stop(t)
		c := rawDial(t, quiet.URL)
		took := closedAfter(t, c, time.Now(), headerTimeout+slack)
		t.Logf("a connection that sends nothing: closed after %v (AGENT_HEADER_TIMEOUT %v, AGENT_IDLE_TIMEOUT 30s)", took.Round(time.Millisecond), headerTimeout)
		if took < headerTimeout-headerTimeout/4 {
			t.Errorf("closed after %v, before the header timeout", took)
		}
	})
	for route, req := range reqs {
		t.Run("header "+route, func(t *testing.T) {
			c := rawDial(t, a.URL)
			start := time.Now()
			head, _, _ := strings.Cut(req, "\r\n\r\n")
			done := make(chan time.Duration, 1)
			go func() { done <- closedAfter(t, c, start, headerTimeout+slack) }()
			// The headers, a byte every 100 ms: never complete in time.
			for i := 0; i < len(head); i++ {
				if _, err := c.Write([]byte{head[i]}); err != nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			took := <-done
			t.Logf("%s, headers a byte per 100 ms: closed after %v (AGENT_HEADER_TIMEOUT %v)", route, took.Round(time.Millisecond), headerTimeout)
			if took < headerTimeout-headerTimeout/4 {
				t.Errorf("%s: closed after %v, before the header timeout", route, took)
			}
		})
		t.Run("idle "+route, func(t *testing.T) {
			c := rawDial(t, a.URL)
			c.SetDeadline(time.Now().Add(30 * time.Second))
			io.WriteString(c, req)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answered := time.Now()
			c.SetReadDeadline(answered.Add(idleTimeout + slack))
			_, err = br.ReadByte()
			took := time.Since(answered)
			t.Logf("%s answered %d, then idle: closed after %v (AGENT_IDLE_TIMEOUT %v)", route, resp.StatusCode, took.Round(time.Millisecond), idleTimeout)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Errorf("%s: an idle connection still open %v later", route, took)
			} else if took < idleTimeout-idleTimeout/4 {
				t.Errorf("%s: idle connection closed after %v, before the idle timeout", route, took)
			}
		})
	}

	t.Run("write", func(t *testing.T) {
		body := make([]byte, 64<<20)
		r, u := upload(t, a, "", "big.bin", body)
		status(t, r, http.StatusCreated)
		pu, _ := url.Parse(u)
		d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10) })
		}}
		c, err := d.Dial("tcp", pu.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET "+pu.RequestURI()+" HTTP/1.1\r\nHost: x\r\n\r\n")
		stopped := time.Now()
		// A client that never reads: after the write timeout (and slack),
		// reading shows whether the agent dropped the download.
		time.Sleep(writeTimeout + slack)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := io.Copy(io.Discard, c)
		t.Logf("a client that never read: %d of %d bytes were sent before the agent dropped it (%v); waited %v", n, len(body), err, time.Since(stopped).Round(time.Millisecond))
		if n >= int64(len(body)) {
			t.Errorf("the whole download reached a client that never read: not dropped")
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("the download of a client that never read is still open")
		}
	})
}

// 300 idle keep-alive connections from one address (AGENT_IDLE_TIMEOUT at
// its default of 2 minutes): the agent keeps its per-client cap of them,
// and /healthz, from the same address, answers at once throughout.
func TestE15IdleConnectionsDoNotStarveHealthz(t *testing.T) {
	a := mcptest.StartAgent(t, fileagentBinary(t), "AGENT_DATA_DIR="+t.TempDir(), "AGENT_SIGNING_KEY="+signingKey,
		"AGENT_MAX_CLIENT_CONNECTIONS=64")
	defer a.Stop(t)
	var conns []net.Conn
	for range 300 {
		c := rawDial(t, a.URL)
		c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			conns = append(conns, c) // now idle, kept open by the client
		}
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var worst time.Duration
	for range 10 {
		start := time.Now()
		resp, err := hc.Get(a.URL + "/healthz")
		if err != nil {
			t.Fatalf("/healthz with 300 idle connections open: %v", err)
		}
		resp.Body.Close()
		worst = max(worst, time.Since(start))
	}
	open := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil && strings.Contains(err.Error(), "timeout") {
			open++
		}
	}
	t.Logf("300 idle connections opened (%d answered); %d still open (cap 64 per client); /healthz slowest of 10: %v",
		len(conns), open, worst.Round(time.Millisecond))
	if open > 64 {
		t.Errorf("%d idle connections of one client open, over its cap of 64", open)
	}
	if worst > time.Second {
		t.Errorf("/healthz took %v with idle connections open", worst)
	}
}
