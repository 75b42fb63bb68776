package attack

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// revocationRecords counts the revocation records under a disk store's
// data folder: the list every replica reads twice a second.
func revocationRecords(t *testing.T, data string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(filepath.Join(data, fileserve.RecordsDir, "revocations"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// revokeVia posts the revocation of u to base through c (whose source
// address may be another client's).
func revokeVia(t *testing.T, c *http.Client, base, u string) reply {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"url": u})
	resp, err := c.Post(base+"/files/revoke", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return reply{resp.StatusCode, resp.Header, body}
}

// The revocation-record flood (review of issue 30): POST /files/revoke
// made a record for every URL a caller held, outside any quota, and every
// replica lists them all twice a second. An anonymous client (no
// authentication: one owner for all, so the cap is per client address)
// holding three times the cap of URLs revokes them all, alternating
// between two replicas sharing a store, with no rate limit: past the cap
// it gets 429 saying what to do, the records stay at most the cap (one
// after the other, each replica reads the other's first), another client address still revokes, and revoking a URL again
// or an expired one adds no record.
func TestRevokeFloodRefused(t *testing.T) {
	const max = 20
	data := t.TempDir()
	env := []string{"AGENT_SIGNING_KEY=" + signingKey, "AGENT_RATE_LIMIT=0", fmt.Sprintf("AGENT_MAX_REVOCATIONS=%d", max), "AGENT_DATA_DIR=" + data}
	a := mcptest.StartAgent(t, fileagentBinary(t), env...)
	b := mcptest.StartAgent(t, fileagentBinary(t), append(env, "AGENT_PUBLIC_URL="+a.URL)...)
	t.Cleanup(func() { a.Stop(t); b.Stop(t) })

	var urls []string
	for i := range 3*max + 2 {
		r, u := upload(t, a, "", fmt.Sprintf("f%d.txt", i), []byte("x"))
		status(t, r, http.StatusCreated)
		urls = append(urls, u)
	}
	flood, spare := urls[:3*max], urls[3*max:]
	accepted, refused := 0, 0
	var refusal reply
	for i, u := range flood {
		base := a.URL
		if i%2 == 1 {
			base = b.URL
		}
		switch r := revokeReq(t, base, u); r.status {
		case http.StatusNoContent:
			accepted++
		case http.StatusTooManyRequests:
			refused++
			refusal = r
		default:
			t.Fatalf("revocation %d: %s", i, r)
		}
	}
	records := revocationRecords(t, data)
	t.Logf("%d revocations alternating between 2 replicas under a cap of %d: %d accepted, %d refused (429); %d records in the store",
		len(flood), max, accepted, refused, records)
	if accepted > max || records > max {
		t.Errorf("%d revocations accepted, %d records; want at most the cap, %d", accepted, records, max)
	}
	if records != accepted {
		t.Errorf("%d records for %d accepted revocations", records, accepted)
	}
	if refused == 0 {
		t.Fatal("no revocation was refused")
	}
	if !strings.Contains(string(refusal.body), "DELETE the file") || !strings.Contains(string(refusal.body), "AGENT_MAX_REVOCATIONS") ||
		refusal.header.Get("Retry-After") == "" {
		t.Errorf("the refusal does not say what to do: %s (Retry-After %q)", refusal, refusal.header.Get("Retry-After"))
	}
	noLeak(t, refusal)
	for _, base := range []string{a.URL, b.URL} {
		status(t, revokeReq(t, base, spare[0]), http.StatusTooManyRequests)
	}
	status(t, do(t, http.MethodGet, spare[0], nil), http.StatusOK)

	// A URL revoked already, or expired: 204 and no record.
	var again string
	for _, u := range flood {
		if do(t, http.MethodGet, u, nil).status == http.StatusForbidden {
			again = u
			break
		}
	}
	pu, _ := url.Parse(spare[1])
	id := strings.Split(strings.TrimPrefix(pu.Path, "/files/"), "/")[0]
	expired := a.URL + pu.Path + "?token=" + expiredToken(t, a.URL, id, "anonymous")
	status(t, revokeReq(t, a.URL, again), http.StatusNoContent)
	status(t, revokeReq(t, b.URL, expired), http.StatusNoContent)
	if n := revocationRecords(t, data); n != records {
		t.Errorf("revoking a revoked URL and an expired one: %d records, want %d", n, records)
	}

	// Another client address is not held back by this one's cap.
	other := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	status(t, revokeVia(t, other, a.URL, spare[1]), http.StatusNoContent)
	status(t, do(t, http.MethodGet, spare[1], nil), http.StatusForbidden)
}
