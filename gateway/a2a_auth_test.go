package gateway_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/gateway"
	"github.com/agentura/agentura/internal/testkit/hydratest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/transfer"
)

// a2aGuard stands before an agent as its public origin and passes on what
// an A2A agent serves (no /mcp: the agent is reached over A2A only). It
// counts the calls of skills (message/send and message/stream) that reach
// the agent, and those of them without a token.
type a2aGuard struct {
	target      atomic.Pointer[url.URL]
	calls, bare atomic.Int32
	mcp         atomic.Int32
}

func (g *a2aGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/mcp") {
		g.mcp.Add(1)
		http.NotFound(w, r)
		return
	}
	if r.Method == http.MethodPost && r.URL.Path == transfer.A2APath {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var rpc struct{ Method string }
		if json.Unmarshal(body, &rpc) == nil && strings.HasPrefix(rpc.Method, "message/") {
			g.calls.Add(1)
			if r.Header.Get("Authorization") == "" {
				g.bare.Add(1)
			}
		}
	}
	httputil.NewSingleHostReverseProxy(g.target.Load()).ServeHTTP(w, r)
}

// TestGatewaySignsInToA2AAgent: an agentura agent with AGENT_AUTH=oauth,
// reached over A2A only, whose card asks for an OAuth token. The gateway
// lists its skills from the public card and begins the sign-in at once, as
// for an MCP agent (one URL shown; the test is the browser, at a real
// Hydra); a host's call (mark3labs/mcp-go) before the user signed in says
// so and sends nothing; after it, the call goes with the token (the file
// staged through the agent's /uploads), and the produced archive is saved
// byte for byte; a gateway started again uses the kept token without a
// sign-in. No call without a token reaches the agent, nor one of a
// gateway without an OAuth client id (a tool error naming the flag).
func TestGatewaySignsInToA2AAgent(t *testing.T) {
	p := hydratest.Start(t)
	guard := &a2aGuard{}
	front := httptest.NewServer(guard)
	t.Cleanup(front.Close)
	base := hydratest.Agent(t, p, func(c *agentcore.Config) {
		u, _ := url.Parse(c.PublicURL)
		guard.target.Store(u)
		c.PublicURL = front.URL // the resource of its tokens, and where its files are
	})
	p.PublicClient(t, "a2a-host", "tools:call files:read files:write", base)
	root, out := t.TempDir(), t.TempDir()
	payload := make([]byte, 200<<10)
	rand.Read(payload)
	if err := os.WriteFile(filepath.Join(root, "data.bin"), payload, 0o644); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(t.TempDir(), "tokens.json")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var shown []string
	c := servedGateway(t, ctx, gateway.Config{
		Agents: []gateway.Agent{{URL: base + transfer.AgentCardPath}}, Roots: []string{root}, Out: out,
		OAuthClientID: "a2a-host", TokenFile: tokens, InlineMaxBytes: -1, // every file through /uploads, with the token
		OpenURL: func(_ context.Context, u string) error {
			mu.Lock()
			shown = append(shown, u)
			mu.Unlock()
			return nil
		},
	})

	// The skills are there before the sign-in: the card is public.
	listedTools(t, c, "archive_files", "inspect_file")
	signInURL := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(shown) == 0 {
			return ""
		}
		return shown[0]
	}
	for deadline := time.Now().Add(time.Minute); signInURL() == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the gateway showed no sign-in URL within a minute of meeting the agent")
		}
	}
	if u, _ := url.Parse(signInURL()); u.Query().Get("resource") != base || u.Query().Get("code_challenge_method") != "S256" {
		t.Errorf("sign-in URL %s: want resource=%s (the agent's protected resource) and PKCE S256", signInURL(), base)
	}

	args := map[string]any{"sources": []any{"data.bin"}, "name": "signed"}
	res := mcptest.CallTool(t, c, "archive_files", args)
	if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, "waits for the sign-in in the browser") || !strings.Contains(text, "Nothing was sent") {
		t.Errorf("a call before the sign-in: is_error %v, text %q; want a tool error saying the sign-in waits", res.IsError, text)
	}
	if n := guard.calls.Load(); n != 0 {
		t.Errorf("%d calls reached the agent before the sign-in, want none", n)
	}

	browser := hydratest.Browser{User: "bob", Password: hydratest.Users["bob"], Deliver: true}
	if _, err := browser.SignIn(ctx, signInURL()); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	// The code is exchanged just after the browser is answered.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		res = mcptest.CallTool(t, c, "archive_files", args)
		if !res.IsError || !strings.Contains(mcptest.Text(res), "waits for the sign-in") || time.Now().After(deadline) {
			break
		}
	}
	mcptest.MustSucceed(t, "archive_files after the sign-in", res)
	m := regexp.MustCompile(`saved as (\S+/signed\.zip)`).FindStringSubmatch(mcptest.Text(res))
	if m == nil {
		t.Fatalf("archive_files: %q", mcptest.Text(res))
	}
	zr, err := zip.OpenReader(m[1])
	if err != nil {
		t.Fatalf("the saved archive: %v", err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "data.bin" {
		t.Fatalf("the saved archive holds %d files, want data.bin alone", len(zr.File))
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, payload) {
		t.Errorf("data.bin in the saved archive: %d bytes (%v), not the %d sent", len(got), err, len(payload))
	}

	if n, bare := guard.calls.Load(), guard.bare.Load(); n == 0 || bare != 0 {
		t.Errorf("calls that reached the agent: %d, %d of them without a token; want some, all with one", n, bare)
	}
	if n := guard.mcp.Load(); n != 0 {
		t.Errorf("the gateway asked the agent's /mcp %d times; it is an A2A agent here", n)
	}
	mu.Lock()
	if len(shown) != 1 {
		t.Errorf("the gateway showed %d sign-in URLs, want 1", len(shown))
	}
	mu.Unlock()
	if st, err := os.Stat(tokens); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v %v", err, st)
	}

	// A gateway started again takes the kept token: no sign-in URL, the call goes.
	var again atomic.Int32
	c3 := servedGateway(t, ctx, gateway.Config{
		Agents: []gateway.Agent{{URL: base + transfer.AgentCardPath}}, Roots: []string{root}, Out: t.TempDir(),
		OAuthClientID: "a2a-host", TokenFile: tokens,
		OpenURL: func(context.Context, string) error { again.Add(1); return nil },
	})
	mcptest.MustSucceed(t, "archive_files with the kept token", mcptest.CallTool(t, c3, "archive_files", args))
	if n := again.Load(); n != 0 {
		t.Errorf("the gateway started again showed %d sign-in URLs, want none (the token is kept)", n)
	}

	// A gateway without an OAuth client id says what to give, and sends nothing.
	c2 := servedGateway(t, ctx, gateway.Config{Agents: []gateway.Agent{{URL: base + transfer.AgentCardPath}}, Roots: []string{root}, Out: t.TempDir()})
	before := guard.calls.Load()
	res = mcptest.CallTool(t, c2, "archive_files", args)
	if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, "--oauth-client-id") || !strings.Contains(text, "Nothing was sent") {
		t.Errorf("a call without an OAuth client id: is_error %v, text %q; want a tool error naming --oauth-client-id", res.IsError, text)
	}
	if n := guard.calls.Load(); n != before {
		t.Errorf("a call without an OAuth client id reached the agent (%d calls, %d before)", n, before)
	}
}

// servedGateway starts a gateway of cfg, serves it over streamable HTTP and
// connects a mark3labs/mcp-go host to it; all end with the test.
func servedGateway(t *testing.T, ctx context.Context, cfg gateway.Config) *client.Client {
	t.Helper()
	g, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	hs := httptest.NewServer(g.Handler())
	t.Cleanup(hs.Close)
	c, _ := mcptest.Connect(t, hs.URL)
	return c
}
