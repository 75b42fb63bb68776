package agentcore

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTrustedProxiesClientAddress(t *testing.T) {
	p, err := parseTrustedProxies([]string{"10.0.0.0/8", "192.168.1.7", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if missing := p.refresh(t.Context()); len(missing) > 0 {
		t.Fatalf("%v did not resolve", missing)
	}
	for _, c := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"untrusted peer: its own address, X-Forwarded-For ignored", "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"trusted peer: the client it names", "10.1.2.3:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a forged entry before the real client stays a claim", "10.1.2.3:5000", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1"},
		{"a chain of trusted proxies is walked back", "192.168.1.7:5000", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"split over several headers", "10.1.2.3:5000", []string{"6.6.6.6", "198.51.100.1"}, "198.51.100.1"},
		{"a host name's addresses are trusted", "127.0.0.1:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"garbage stops the walk at the last vouched address", "10.1.2.3:5000", []string{"198.51.100.1, junk, 10.2.2.2"}, "10.2.2.2"},
		{"trusted peer without the header", "10.1.2.3:5000", nil, "10.1.2.3"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.peer
		for _, h := range c.xff {
			r.Header.Add("X-Forwarded-For", h)
		}
		if got := p.clientAddr(r); got != c.want {
			t.Errorf("%s: client %q, want %q", c.name, got, c.want)
		}
	}
	var none *trustedProxies
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr, r.Header["X-Forwarded-For"] = "10.1.2.3:5000", []string{"198.51.100.1"}
	if got := none.clientAddr(r); got != "10.1.2.3" {
		t.Errorf("without AGENT_TRUSTED_PROXIES: client %q, want the peer", got)
	}
	for _, bad := range []string{"10.0.0.0/33", "not a host!", "-x.example"} {
		if _, err := parseTrustedProxies([]string{bad}); err == nil {
			t.Errorf("parseTrustedProxies(%q) accepted it", bad)
		}
	}
}

// The request log names the client a trusted proxy forwarded for, and only
// then; a bad AGENT_TRUSTED_PROXIES stops New with a ConfigError naming it.
func TestTrustedProxiesInTheRequestLog(t *testing.T) {
	for _, c := range []struct {
		trusted []string
		want    string
	}{{[]string{"127.0.0.1"}, "client=198.51.100.1"}, {nil, "client=127.0.0.1"}} {
		var logs bytes.Buffer
		svc, err := New(Info{Name: "test-agent", Version: "0"}, Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PublicURL: "http://agent.test",
			CleanupSchedule: "@every 1h", TrustedProxies: c.trusted, LogLevel: "debug"},
			slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(svc.Handler())
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/healthz", nil)
		req.Header.Set("X-Forwarded-For", "198.51.100.1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		srv.Close()
		svc.Close()
		if !strings.Contains(logs.String(), c.want) {
			t.Errorf("trusted %v: the request log lacks %s:\n%s", c.trusted, c.want, logs.String())
		}
	}
	_, err := New(Info{Name: "test-agent", Version: "0"}, Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), TrustedProxies: []string{"10.0.0.0/40"}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if ce := (*ConfigError)(nil); !errors.As(err, &ce) || ce.Var != "AGENT_TRUSTED_PROXIES" {
		t.Errorf("a bad AGENT_TRUSTED_PROXIES: %v, want a ConfigError naming it", err)
	}
}
