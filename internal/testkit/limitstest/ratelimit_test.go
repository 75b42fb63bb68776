package limitstest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// Under AGENT_AUTH=jwt, alice's burst of uploads runs into the rate limit
// (429, Retry-After, JSON error) while bob's requests still go through.
func TestRateLimitPerOwner(t *testing.T) {
	a := mcptest.StartAgent(t, agentBin, "AGENT_AUTH=jwt", "AGENT_AUTH_JWT_SECRET="+jwtSecret,
		"AGENT_RATE_LIMIT=1", "AGENT_RATE_BURST=3")
	t.Cleanup(func() { a.Stop(t) })
	alice, bob := mcptest.BearerToken(t, jwtSecret, "alice"), mcptest.BearerToken(t, jwtSecret, "bob")

	for i := range 3 {
		if resp, body := upload(t, a, alice, 10); resp.StatusCode != http.StatusCreated {
			t.Fatalf("alice's upload %d within the burst: %s %s", i+1, resp.Status, body)
		}
	}
	resp, body := upload(t, a, alice, 10)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("alice's 4th upload: want 429, got %s %s", resp.Status, body)
	}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q, want whole seconds ≥ 1", resp.Header.Get("Retry-After"))
	}
	var e struct{ Error string }
	if json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, "AGENT_RATE_LIMIT") || !strings.Contains(e.Error, `caller "alice"`) {
		t.Errorf("429 body: %q", body)
	}
	for i := range 3 {
		if resp, body := upload(t, a, bob, 10); resp.StatusCode != http.StatusCreated {
			t.Fatalf("bob's upload %d is limited by alice's: %s %s", i+1, resp.Status, body)
		}
	}
	// /mcp is limited per owner too.
	req, _ := http.NewRequest(http.MethodPost, a.URL+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+alice)
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusTooManyRequests {
		t.Errorf("alice's /mcp request: want 429, got %s", r2.Status)
	}
	if m := metric(t, a, `agentura_refused_total{reason="rate_limit"}`); m != `agentura_refused_total{reason="rate_limit"} 2` {
		t.Errorf("metric: got %q", m)
	}
}
