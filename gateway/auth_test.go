package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/gateway"
	"github.com/agentura/agentura/internal/testkit/hydratest"
)

// TestGatewaySignsInWithOAuth: the gateway meets an agent with
// AGENT_AUTH=oauth, signs in at its identity provider (a real Hydra; the
// test is the browser for the URL the gateway shows) and forwards a host's
// call with a file named by path; the token lands in its own file (0600).
func TestGatewaySignsInWithOAuth(t *testing.T) {
	p := hydratest.Start(t)
	base := hydratest.Agent(t, p)
	p.PublicClient(t, "gateway-host", "tools:call files:read files:write", base)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "note.txt"), []byte(strings.Repeat("gateway signed in\n", 50)), 0o644)
	tokens := filepath.Join(t.TempDir(), "tokens.json")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	browser := hydratest.Browser{User: "bob", Password: hydratest.Users["bob"], Deliver: true}
	g, err := gateway.New(ctx, gateway.Config{
		Agents: []gateway.Agent{{URL: base + "/mcp"}}, Roots: []string{root}, Out: t.TempDir(),
		OAuthClientID: "gateway-host", TokenFile: tokens, InlineMaxBytes: -1, // every file through /uploads, with the token
		OpenURL: func(ctx context.Context, u string) error {
			go browser.SignIn(ctx, u)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	host, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "inspect_file", Arguments: map[string]any{"source": "note.txt"}})
	if err != nil || res.IsError {
		t.Fatalf("call through the gateway: %v %+v", err, res)
	}
	if st, err := os.Stat(tokens); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v %v", err, st)
	}
}

// TestSignInOutlastsTheConnectAttempt: the user takes longer on the
// provider's page than one attempt to connect lasts (2 s here, 20 s in
// use). The sign-in waits as long as it says: its callback listener is
// still there when the browser comes back, no second URL is shown while it
// waits, and the agent's tools appear as soon as it ended. (The gateway
// gave up on the sign-in with the attempt, dropped its listener and showed
// a new URL on every attempt: the browser met a closed port.)
func TestSignInOutlastsTheConnectAttempt(t *testing.T) {
	p := hydratest.Start(t)
	base := hydratest.Agent(t, p)
	p.PublicClient(t, "slow-user-host", "tools:call files:read files:write", base)
	const attempt = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var shown []string
	var signedIn time.Time
	browserDone := make(chan error, 1)
	browser := hydratest.Browser{User: "alice", Password: hydratest.Users["alice"], Deliver: true}
	cfg := gateway.WithConnectTimeout(gateway.Config{
		Agents: []gateway.Agent{{Name: "slow", URL: base + "/mcp"}}, Roots: []string{t.TempDir()}, Out: t.TempDir(),
		OAuthClientID: "slow-user-host", TokenFile: filepath.Join(t.TempDir(), "tokens.json"),
		OpenURL: func(_ context.Context, u string) error {
			mu.Lock()
			shown = append(shown, u)
			first := len(shown) == 1
			mu.Unlock()
			if first {
				go func() {
					time.Sleep(3 * attempt) // the user reads, types, comes back
					_, err := browser.SignIn(ctx, u)
					mu.Lock()
					signedIn = time.Now()
					mu.Unlock()
					browserDone <- err
				}()
			}
			return nil
		},
	}, attempt)
	g, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := connectHost(t, ctx, g)
	select {
	case err := <-browserDone:
		if err != nil {
			t.Fatalf("the browser could not hand the sign-in back to the gateway: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the browser did not finish")
	}
	waitFor(t, &mu, func() bool { return slices.Contains(h.tools(t, ctx), "inspect_file") },
		func() string { return "the agent's tools did not appear after the sign-in" })
	mu.Lock()
	took := time.Since(signedIn)
	n := len(shown)
	mu.Unlock()
	if took > 5*time.Second {
		t.Errorf("the tools appeared %v after the sign-in ended, want at once", took)
	}
	if n != 1 {
		t.Errorf("the gateway showed %d sign-in URLs, want 1", n)
	}
	if res := h.call(t, ctx, "list_files"); res.IsError {
		t.Errorf("list_files: %s", resultText(res))
	}
}
