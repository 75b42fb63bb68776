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
