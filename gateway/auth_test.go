package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
