package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/internal/testkit/hydratest"
)

// TestSignInRefreshesKeptToken: a host signs in once at a real identity
// provider (Hydra, its access tokens living 5 s) and keeps the tokens in a
// token file; after the access token has expired, a second host with the
// same token file reaches the agent without showing a sign-in page: the
// refresh token got a new access token, which the file now holds. Once
// that refresh token is revoked, a third host signs in again.
func TestSignInRefreshesKeptToken(t *testing.T) {
	const ttl = 5 * time.Second
	p := hydratest.Start(t, hydratest.AccessTokenTTL(ttl))
	base := hydratest.Agent(t, p)
	endpoint := base + "/mcp"
	p.PublicClient(t, "refresh-host", "tools:call files:read files:write", base)
	path := filepath.Join(t.TempDir(), "tokens.json")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	browser := hydratest.Browser{User: "alice", Password: hydratest.Users["alice"], Deliver: true}
	var signIns atomic.Int32
	listTools(ctx, t, endpoint, path, func(ctx context.Context, u string) error {
		signIns.Add(1)
		go browser.SignIn(ctx, u)
		return nil
	})
	if n := signIns.Load(); n != 1 {
		t.Fatalf("the first host showed the sign-in page %d times, want 1", n)
	}
	first := keptToken(t, path, endpoint)
	if first.RefreshToken == "" {
		t.Fatalf("no refresh token kept: %+v", first)
	}
	if wait := time.Until(first.Expiry); wait > ttl {
		t.Fatalf("the kept access token expires in %s, not within the provider's %s", wait, ttl)
	}
	time.Sleep(time.Until(first.Expiry) + time.Second)

	listTools(ctx, t, endpoint, path, func(context.Context, string) error {
		signIns.Add(1)
		return errors.New("the second host must refresh its token, not sign in again")
	})
	if n := signIns.Load(); n != 1 {
		t.Fatalf("the second host showed the sign-in page (%d sign-ins in all)", n)
	}
	second := keptToken(t, path, endpoint)
	if second.AccessToken == first.AccessToken {
		t.Fatal("the token file still holds the expired access token")
	}
	if !second.Expiry.After(first.Expiry) {
		t.Errorf("the new access token expires at %s, not after the old one (%s)", second.Expiry, first.Expiry)
	}

	// A refresh token the provider no longer honours (revoked: invalid_grant)
	// means signing in again, not an error.
	revoke(t, p, "refresh-host", keptToken(t, path, endpoint).RefreshToken)
	listTools(ctx, t, endpoint, path, func(ctx context.Context, u string) error {
		signIns.Add(1)
		go browser.SignIn(ctx, u)
		return nil
	})
	if n := signIns.Load(); n != 2 {
		t.Fatalf("after the refresh token was revoked, %d sign-ins in all, want 2", n)
	}
}

// revoke revokes a token of the public client id at p (RFC 7009).
func revoke(t *testing.T, p *hydratest.Provider, id, token string) {
	t.Helper()
	resp, err := http.PostForm(p.Issuer+"/oauth2/revoke", url.Values{"token": {token}, "client_id": {id}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("revoke the refresh token: %s: %s", resp.Status, b)
	}
}

// listTools connects a host signing in through openURL, with the token file
// at path, to endpoint and lists its tools.
func listTools(ctx context.Context, t *testing.T, endpoint, path string, openURL func(context.Context, string) error) {
	t.Helper()
	tokens, err := client.OpenTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	o, err := client.SignIn(endpoint, client.OAuthConfig{ClientID: "refresh-host", Tokens: tokens, OpenURL: openURL})
	if err != nil {
		t.Fatal(err)
	}
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, OAuthHandler: o.Handler()}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) == 0 {
		t.Fatalf("list tools: %v %+v", err, res)
	}
}

// keptToken reads endpoint's token from the token file at path.
func keptToken(t *testing.T, path, endpoint string) *oauth2.Token {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]struct {
		Token *oauth2.Token `json:"token"`
	}
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	if all[endpoint].Token == nil {
		t.Fatalf("no token kept for %s in %s", endpoint, b)
	}
	return all[endpoint].Token
}
