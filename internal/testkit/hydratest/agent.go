package hydratest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"testing"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/examples/fileagent"
)

// Agent serves the example file agent on loopback with AGENT_AUTH=oauth,
// its issuer p (allowed past the SSRF guard by name, as it is on
// loopback), until the test ends. It returns the agent's base URL, which
// is also its AGENT_PUBLIC_URL. Each edit changes the configuration first.
func Agent(tb testing.TB, p *Provider, edits ...func(*agentcore.Config)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	cfg, err := agentcore.ConfigFromLookup(func(string) (string, bool) { return "", false }, "fileagent", "")
	if err != nil {
		tb.Fatal(err)
	}
	iss, _ := url.Parse(p.Issuer)
	cfg.DataDir = tb.TempDir()
	cfg.StorageURL = "file://" + cfg.DataDir
	cfg.PublicURL = "http://" + ln.Addr().String()
	cfg.Auth = "oauth"
	cfg.OAuthIssuer = p.Issuer
	cfg.FetchAllowHosts = []string{iss.Host}
	for _, e := range edits {
		e(&cfg)
	}
	svc, err := agentcore.New(agentcore.Info{Name: "fileagent"}, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	if err := fileagent.Register(svc); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, ln) }()
	tb.Cleanup(func() {
		cancel()
		<-done
		svc.Close()
	})
	return cfg.PublicURL
}
