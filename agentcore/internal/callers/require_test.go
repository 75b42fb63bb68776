package callers

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentura/agentura/agentcore/internal/urlfetch"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/transfer"
)

// closedAddr is a loopback address nothing listens on: connections to it
// are refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Under AGENT_AUTH=oauth, a token that cannot be checked because the
// identity provider refuses connections is answered 503 with Retry-After
// and the JSON error body of a failure (the cause in words, reason
// identity_provider_unavailable, no address), not 401 with a challenge: a
// host keeps its token and sends it again. A token with crit in its
// header is refused 401 invalid_token all the same, before the provider
// is asked.
func TestRequireAnswersUnavailableProviderWith503(t *testing.T) {
	addr := closedAddr(t)
	g, err := New(Access{Auth: "oauth", OAuthIssuer: "http://" + addr}, "https://agent.test",
		urlfetch.New([]string{addr}, time.Minute), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	h := g.Require(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("the handler behind the check ran")
	}))
	tok := func(header map[string]any) string {
		c := jwt.MapClaims{"iss": "http://" + addr, "sub": "alice", "aud": "https://agent.test/mcp", "exp": time.Now().Add(time.Hour).Unix()}
		tk := jwt.NewWithClaims(jwt.SigningMethodHS256, c) // the algorithm is checked after the key: no key here
		tk.Header["alg"] = "RS256"
		for k, v := range header {
			tk.Header[k] = v
		}
		s, _ := tk.SigningString()
		return s + ".c2lnbmF0dXJl"
	}
	send := func(token string) *http.Response {
		req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/mcp", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}

	resp := send(tok(map[string]any{"kid": "k1"}))
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("%s %s, want 503", resp.Status, body)
	}
	if resp.Header.Get("Retry-After") == "" || resp.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("Retry-After %q, WWW-Authenticate %q: want the first, not the second", resp.Header.Get("Retry-After"), resp.Header.Get("WWW-Authenticate"))
	}
	var e transfer.Error
	if err := json.Unmarshal(body, &e); err != nil || e.Reason != fault.IdentityProviderUnavailable || !strings.Contains(e.Error, "identity provider") {
		t.Errorf("body %s: want {error, reason: %s}", body, fault.IdentityProviderUnavailable)
	}
	if host, port, _ := net.SplitHostPort(addr); strings.Contains(string(body), host) || strings.Contains(string(body), port) {
		t.Errorf("the body names the provider's address: %s", body)
	}

	resp = send(tok(map[string]any{"kid": "k1", "crit": []string{"urn:example:unknown"}}))
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) ||
		!strings.Contains(string(body), "crit") {
		t.Errorf("a token with crit: %s %q %s, want 401 invalid_token saying crit", resp.Status, resp.Header.Get("WWW-Authenticate"), body)
	}
}

// Under AGENT_AUTH=jwt a token whose header has crit is refused, though
// signed with the operator's key (RFC 7515 §4.1.11).
func TestCallerTokenWithCritRefused(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef-test"
	v, err := newCallerVerifier(Access{AuthJWTSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	sign := func(crit any) string {
		tk := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})
		if crit != nil {
			tk.Header["crit"] = crit
		}
		s, err := tk.SignedString([]byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if _, err := v.Verify(context.Background(), sign(nil), nil); err != nil {
		t.Fatalf("the token without crit: %v", err)
	}
	for _, crit := range []any{[]string{"urn:example:unknown"}, []string{}, []string{"exp"}} {
		if _, err := v.Verify(context.Background(), sign(crit), nil); err == nil || !strings.Contains(err.Error(), "crit") {
			t.Errorf("crit %v: %v, want a refusal saying crit", crit, err)
		}
	}
}
