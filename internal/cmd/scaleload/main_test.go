package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// TestRunAgainstTheComposer runs the load test against a real composer
// agent for a short while: rounds succeed and are measured. Through a
// proxy that flips a byte of every download, every round fails as corrupt.
func TestRunAgainstTheComposer(t *testing.T) {
	bin := mcptest.BuildBinary(t, "github.com/agentura/agentura/cmd/composer-agent", false)
	agent := mcptest.StartAgent(t, bin, "AGENT_MCP_STATELESS=true")
	rep, err := run(t.Context(), config{base: agent.URL, clients: 3, duration: 2 * time.Second, rounds: 30}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rep.rounds == 0 || rep.failed != 0 || len(rep.latencies) != rep.rounds || rep.bytes == 0 {
		t.Fatalf("against the composer: %s", rep)
	}
	if !strings.Contains(rep.String(), "p99") {
		t.Errorf("the report names no p99: %s", rep)
	}

	// Through a proxy that flips a byte of every download: the agent behind
	// it names the proxy as its public URL, as replicas name the balancer.
	proxy := &httputil.ReverseProxy{}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	corrupt := mcptest.StartAgent(t, bin, "AGENT_MCP_STATELESS=true", "AGENT_PUBLIC_URL="+srv.URL)
	target, _ := url.Parse(corrupt.URL)
	*proxy = *httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = flipMiddleByte
	rep, err = run(t.Context(), config{base: srv.URL, clients: 2, duration: 2 * time.Second, rounds: 4}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rep.rounds != 4 || rep.failed != 4 || !strings.Contains(rep.firstErrors[0], "corrupt") {
		t.Errorf("through a corrupting proxy: %s; want all 4 rounds failed as corrupt", rep)
	}
}

// flipMiddleByte changes one byte of every download.
func flipMiddleByte(resp *http.Response) error {
	if !strings.HasPrefix(resp.Request.URL.Path, "/files/") {
		return nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(b) > 0 {
		b[len(b)/2] ^= 0x20
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return err
}

func TestRunRefusesWhatItMustNotDo(t *testing.T) {
	for _, c := range []config{
		{base: "http://example.com", clients: 1, duration: time.Second, rounds: 1},
		{base: "http://10.0.0.1:8443", clients: 1, duration: time.Second, rounds: 1},
		{base: "http://localhost:1", clients: 0, duration: time.Second, rounds: 1},
		{base: "http://localhost:1", clients: 1, duration: time.Hour, rounds: 1},
		{base: "ftp://localhost", clients: 1, duration: time.Second, rounds: 1},
	} {
		if _, err := run(t.Context(), c, io.Discard); err == nil {
			t.Errorf("run(%+v) was accepted", c)
		}
	}
}
