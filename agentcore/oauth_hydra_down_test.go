package agentcore_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/hydratest"
)

// TestOAuthWithHydraDown stops a real identity provider (Ory Hydra) under
// a running agent: a token of a key the agent read before still works; a
// valid token of a key it has not read (Hydra rotated just before going
// down) is answered 503 with Retry-After and the JSON error of a failure,
// naming no address, not 401 (a host would throw its token away and sign
// in again); /readyz stays 200 and says identity_provider is degraded.
func TestOAuthWithHydraDown(t *testing.T) {
	p := hydratest.Start(t)
	base := hydratest.Agent(t, p)
	readyz := func() (int, string) {
		r, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	// Ready once it has read the provider (on a loaded machine the first
	// read may take longer than a request waits for it).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if code, body := readyz(); code == http.StatusOK {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("/readyz a minute after start: %d %s", code, body)
		}
	}
	secret := p.ServiceClient(t, "svc-down", allScopes, base)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	old := p.ClientCredentialsToken(t, "svc-down", secret, allScopes, base+"/mcp")
	if resp, body := post(t, base, "/mcp", old, init); resp.StatusCode != http.StatusOK {
		t.Fatalf("before the outage: %s %s", resp.Status, body)
	}
	kid := p.RotateKey(t)
	fresh := p.ClientCredentialsToken(t, "svc-down", secret, allScopes, base+"/mcp")
	if tokenKid(t, fresh) != kid {
		t.Fatalf("the new token is not of the new key %q", kid)
	}
	p.Stop()
	idp, _ := url.Parse(p.Issuer)

	resp, body := post(t, base, "/mcp", fresh, init)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a valid token of a key not read yet, the provider down: %s %s, want 503", resp.Status, body)
	}
	var e struct{ Error, Reason string }
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Reason != "identity_provider_unavailable" || resp.Header.Get("Retry-After") == "" ||
		resp.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("503: Retry-After %q, WWW-Authenticate %q, body %s", resp.Header.Get("Retry-After"), resp.Header.Get("WWW-Authenticate"), body)
	}
	if strings.Contains(body, idp.Host) || strings.Contains(body, idp.Port()) {
		t.Errorf("the 503 names the provider's address: %s", body)
	}
	if resp, body := post(t, base, "/mcp", old, init); resp.StatusCode != http.StatusOK {
		t.Errorf("a token of the key read before, the provider down: %s %s", resp.Status, body)
	}

	deadline := time.Now().Add(time.Minute)
	for {
		code, b := readyz()
		var rz struct {
			Checks   map[string]string
			Degraded []string
		}
		json.Unmarshal([]byte(b), &rz)
		if strings.Contains(b, idp.Host) || strings.Contains(b, idp.Port()) {
			t.Fatalf("/readyz names the provider's address: %s", b)
		}
		if code == http.StatusOK && len(rz.Degraded) == 1 && rz.Degraded[0] == "identity_provider" &&
			strings.Contains(rz.Checks["identity_provider"], "cannot be reached") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz a minute into the outage: %d %s, want 200 with identity_provider degraded", code, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
