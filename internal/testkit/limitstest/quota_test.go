package limitstest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/mark3labs/mcp-go/client/transport"
)

const jwtSecret = "limitstest-secret-of-at-least-32-bytes!"

// Two owners under AGENT_AUTH=jwt: alice's uploads and outputs stop at
// the quota with 507 / a tool error that names the quota, her use and when
// space frees up, leaving nothing partial; bob is not affected.
func TestOwnerQuota(t *testing.T) {
	dataDir := t.TempDir()
	a := mcptest.StartAgent(t, agentBin, "AGENT_AUTH=jwt", "AGENT_AUTH_JWT_SECRET="+jwtSecret,
		"AGENT_OWNER_QUOTA_BYTES=1000000", "AGENT_DATA_DIR="+dataDir)
	t.Cleanup(func() { a.Stop(t) })
	alice, bob := mcptest.BearerToken(t, jwtSecret, "alice"), mcptest.BearerToken(t, jwtSecret, "bob")

	if resp, body := upload(t, a, alice, 600_000); resp.StatusCode != http.StatusCreated {
		t.Fatalf("alice's first upload: %s %s", resp.Status, body)
	}
	resp, body := upload(t, a, alice, 600_000)
	if resp.StatusCode != http.StatusInsufficientStorage {
		t.Fatalf("alice's second upload: want 507, got %s %s", resp.Status, body)
	}
	var e struct{ Error string }
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("507 body is not JSON: %q", body)
	}
	for _, want := range []string{"quota", "AGENT_OWNER_QUOTA_BYTES", "holds 585.9 KiB of its 976.6 KiB", "space frees up at"} {
		if !strings.Contains(e.Error, want) {
			t.Errorf("507 error %q does not say %q", e.Error, want)
		}
	}
	if n := storedFiles(t, dataDir, "staging"); n != 1 {
		t.Errorf("%d staged files after the refused upload, want 1", n)
	}
	if resp, body := upload(t, a, bob, 600_000); resp.StatusCode != http.StatusCreated {
		t.Fatalf("bob's upload is limited by alice's use: %s %s", resp.Status, body)
	}

	// A tool output that would pass the quota fails with the same words.
	c, _ := mcptest.Connect(t, a.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + alice}))
	res := mcptest.CallTool(t, c, "make_blob", map[string]any{"bytes": 500_000})
	if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, "owner quota exceeded") || !strings.Contains(text, "AGENT_OWNER_QUOTA_BYTES") {
		t.Errorf("output over the quota: want a tool error naming the quota, got error=%v %q", res.IsError, text)
	}
	if n := storedFiles(t, dataDir, "outputs"); n != 0 {
		t.Errorf("%d outputs stored after the refused call, want 0", n)
	}
	mcptest.MustSucceed(t, "make_blob", mcptest.CallTool(t, c, "make_blob", map[string]any{"bytes": 1000}))
	if m := metric(t, a, `agentura_refused_total{reason="quota"}`); m != `agentura_refused_total{reason="quota"} 2` {
		t.Errorf("metric: got %q", m)
	}
}
