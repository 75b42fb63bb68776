package attack

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/outage"
)

// unavailable fails unless r is the answer to a token that could not be
// checked: 503 with Retry-After and the JSON error of a failure (reason
// identity_provider_unavailable), no challenge (the token is not
// refused), no address of the provider's and none of the agent's secrets.
func unavailable(t *testing.T, idp *outage.Server, r reply, what string) {
	t.Helper()
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("%s: want 503, got %s", what, r)
	}
	var e struct{ Error, Reason string }
	if err := json.Unmarshal(r.body, &e); err != nil || e.Reason != "identity_provider_unavailable" || e.Error == "" {
		t.Errorf("%s: body %s, want {error, reason: identity_provider_unavailable}", what, r.body)
	}
	if r.header.Get("Retry-After") == "" || r.header.Get("WWW-Authenticate") != "" {
		t.Errorf("%s: Retry-After %q, WWW-Authenticate %q: want the first, not the second", what, r.header.Get("Retry-After"), r.header.Get("WWW-Authenticate"))
	}
	noAddress(t, idp, string(r.body), what)
}

// noAddress fails when text names the provider's address or port, the
// address of its 503s, or a secret of the agent's.
func noAddress(t *testing.T, idp *outage.Server, text, what string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(idp.Addr())
	for _, s := range append(leaks(text), idp.Addr(), ":"+port, outage.FailingAddress) {
		if strings.Contains(text, s) {
			t.Errorf("%s: the answer names %q: %s", what, s, text)
		}
	}
}

// readyz polls the agent's /readyz until want holds of its answer, for a
// minute at the most, checking each answer names no address.
func readyz(t *testing.T, idp *outage.Server, a *mcptest.Agent, what string, want func(code int, degraded []string, checks map[string]string) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r := do(t, http.MethodGet, a.URL+"/readyz", nil)
		noAddress(t, idp, string(r.body), "/readyz")
		var rz struct {
			Checks   map[string]string
			Degraded []string
		}
		json.Unmarshal(r.body, &rz)
		if want(r.status, rz.Degraded, rz.Checks) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz %s: still %s", what, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// issuerRetry is how long after a failed read of the provider the agent
// reads it again (oauthrs.issuerRetry), plus a margin.
const issuerRetry = 6 * time.Second

// TestOAuthProviderDown runs the built file agent as the resource server
// of a provider that goes down under it (issue 39): a valid token of a key
// the agent has not read yet is answered 503 with Retry-After while the
// provider refuses connections, hangs or answers 503, never 401 (a host
// would throw its token away and sign in again), and a hanging provider
// holds a request 5 s at the most (it was 15 s); tokens of the keys read
// before keep working, tokens their own claims or a known key refuse stay
// 401; /readyz stays 200 and names identity_provider under "degraded";
// the requests of an outage reach the provider at most once per 5 s; and
// the new key works once the provider is back.
func TestOAuthProviderDown(t *testing.T) {
	h := newHostileIdP(t)
	idp := outage.Start(t, http.HandlerFunc(h.serve))
	iss := idp.URL() + "/good"
	a := mcptest.NewAgent(t, fileagentBinary(t), "AGENT_AUTH=oauth", "AGENT_OAUTH_ISSUER="+iss,
		"AGENT_FETCH_ALLOW_HOSTS="+idp.Addr(), "AGENT_MCP_STATELESS=true", "AGENT_SIGNING_KEY="+signingKey)
	a.Start(t)
	a.WaitFor(t, "/healthz", http.StatusOK)
	old := h.sign(t, accessClaims(iss, a.URL), "k1")
	if r := listTools(t, a, old); r.status != http.StatusOK {
		t.Fatalf("a valid token before the outage: %s\n%s", r, a.Logs())
	}
	readyz(t, idp, a, "before the outage", func(code int, degraded []string, _ map[string]string) bool {
		return code == http.StatusOK && len(degraded) == 0
	})

	h.rotated.Store(true) // the provider publishes k2 and signs with it...
	fresh := signRS256(t, h.next, accessClaims(iss, a.URL), map[string]any{"kid": "k2"})
	idp.Down() // ...and goes down before the agent has read it

	t.Run("provider refusing connections", func(t *testing.T) {
		unavailable(t, idp, listTools(t, a, fresh), "a valid token of a key not read yet")
		unavailable(t, idp, listTools(t, a, fresh), "the same token again")
		if r := listTools(t, a, old); r.status != http.StatusOK {
			t.Errorf("a token of the key read before the outage: %s", r)
		}
		expired := accessClaims(iss, a.URL)
		expired["exp"] = time.Now().Add(-time.Hour).Unix()
		refusedToken(t, listTools(t, a, signRS256(t, h.next, expired, map[string]any{"kid": "k2"})), "an expired token of the unread key")
		refusedToken(t, listTools(t, a, signRS256(t, h.next, accessClaims(iss, "https://other.agent.test"), map[string]any{"kid": "k2"})),
			"a token of the unread key for another resource")
		refusedToken(t, listTools(t, a, signRS256(t, h.next, accessClaims(iss, a.URL), map[string]any{"kid": "k1"})),
			"a token naming the known key, signed with another")
		readyz(t, idp, a, "during the outage", func(code int, degraded []string, checks map[string]string) bool {
			return code == http.StatusOK && len(degraded) == 1 && degraded[0] == "identity_provider" &&
				strings.Contains(checks["identity_provider"], "cannot be reached")
		})
	})

	t.Run("provider hanging", func(t *testing.T) {
		idp.Set(outage.Hanging)
		idp.Up(t)
		time.Sleep(issuerRetry) // past the last failed read: the next request reads
		before := idp.Requests("/good/jwks")
		began := time.Now()
		unavailable(t, idp, listTools(t, a, fresh), "a valid token of a key not read yet")
		if took := time.Since(began); took > 12*time.Second {
			t.Errorf("the request was held %s; a read of the provider is bounded at 5 s", took.Round(time.Millisecond))
		}
		for range 10 {
			unavailable(t, idp, listTools(t, a, fresh), "the same token again")
		}
		// One read per 5 s (two should the burst straddle two windows on a
		// slow machine).
		if n := idp.Requests("/good/jwks") - before; n < 1 || n > 2 {
			t.Errorf("eleven requests made %d reads of the key set; want one per 5 s", n)
		}
		if r := listTools(t, a, old); r.status != http.StatusOK {
			t.Errorf("a token of the key read before the outage: %s", r)
		}
	})

	t.Run("provider answering 503", func(t *testing.T) {
		idp.Set(outage.Failing)
		time.Sleep(issuerRetry)
		unavailable(t, idp, listTools(t, a, fresh), "a valid token of a key not read yet")
	})

	t.Run("provider back", func(t *testing.T) {
		idp.Set(outage.Serving)
		deadline := time.Now().Add(time.Minute)
		for r := listTools(t, a, fresh); r.status != http.StatusOK; r = listTools(t, a, fresh) {
			if r.status != http.StatusServiceUnavailable {
				t.Fatalf("the new key while the provider comes back: %s, want 503 then 200", r)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the new key a minute after the provider came back: %s", r)
			}
			time.Sleep(500 * time.Millisecond)
		}
		readyz(t, idp, a, "once the provider is back", func(code int, degraded []string, checks map[string]string) bool {
			return code == http.StatusOK && len(degraded) == 0 && checks["identity_provider"] == "ok"
		})
	})
}
