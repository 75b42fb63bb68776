package filehttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/agentura/agentura/internal/lib/revocation"
	"github.com/agentura/agentura/transfer"
)

// manageEnv serves /files/ with DELETE and the revoke endpoint as agentcore
// mounts them; the caller is the X-Owner header.
func manageEnv(t *testing.T, verified bool) (*testEnv, *quota.Store) {
	t.Helper()
	var q *quota.Store
	env := newTestEnv(t, "mux", func(c *Config) {
		var err error
		if q, err = quota.New(c.Store, quota.Config{Limit: 1 << 20}); err != nil {
			t.Fatal(err)
		}
		c.Store = q
		c.Revocations = revocation.New(c.Store.(*quota.Store).Store.(fileserve.RecordStore), revocation.Options{OnDeleted: q.Forget, MaxPerOwner: manageMaxRevocations})
		c.OwnerVerified = verified
		c.Owner = func(r *http.Request) (string, error) {
			if o := r.Header.Get("X-Owner"); o != "" {
				return o, nil
			}
			return "", errors.New("no X-Owner")
		}
	})
	env.ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == transfer.RevokePath:
			env.srv.ServeRevoke(w, r)
		case r.Method == http.MethodDelete:
			env.srv.ServeDelete(w, r)
		default:
			env.srv.ServeFile(w, r)
		}
	})
	return env, q
}

func (env *testEnv) putQuota(t *testing.T, q *quota.Store, owner, name string, n int) fileserve.Meta {
	t.Helper()
	m, err := q.Put(bg, fileserve.NewFile{Area: fileserve.Outputs, Owner: owner, Name: name}, strings.NewReader(strings.Repeat("x", n)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The owner deletes a file by DELETE on its URL: every URL of it stops at
// once and its quota is free; another caller may not, with the URL or
// without it.
func TestDeleteFile(t *testing.T) {
	env, q := manageEnv(t, false)
	m := env.putQuota(t, q, "alice", "a.txt", 1000)
	u := env.signedURL(t, m)
	other := env.signedURL(t, m)
	owner := func(o string) http.Header { return http.Header{"X-Owner": {o}} }

	if resp, body := do(t, "DELETE", u, owner("mallory"), nil); resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "owner") {
		t.Errorf("DELETE of alice's URL by mallory: %s %s; want 403", resp.Status, body)
	}
	noToken := strings.Split(u, "?")[0]
	if resp, body := do(t, "DELETE", noToken, owner("alice"), nil); resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "token") {
		t.Errorf("DELETE without a token when callers are not verified: %s %s; want 403", resp.Status, body)
	}
	if resp, _ := do(t, "GET", u, nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("the refused deletions deleted the file: GET %s", resp.Status)
	}
	if resp, body := do(t, "DELETE", u, owner("alice"), nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE by the owner: %s %s", resp.Status, body)
	}
	for _, url := range []string{u, other} {
		if resp, _ := do(t, "GET", url, nil, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET after DELETE: %s, want 404", resp.Status)
		}
	}
	if used, _ := q.Used(bg, "alice"); used != 0 {
		t.Errorf("alice uses %d after deleting her only file, want 0", used)
	}
	if resp, _ := do(t, "DELETE", u, owner("alice"), nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("DELETE twice: %s, want 404", resp.Status)
	}
}

// With verified callers (AGENT_AUTH=jwt) the id alone names the caller's
// file; another caller's id is not found.
func TestDeleteByIDWithVerifiedCaller(t *testing.T) {
	env, q := manageEnv(t, true)
	m := env.putQuota(t, q, "alice", "a.txt", 10)
	path := env.ts.URL + "/files/" + m.ID
	if resp, _ := do(t, "DELETE", path, http.Header{"X-Owner": {"mallory"}}, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("DELETE of alice's id by mallory: %s, want 404", resp.Status)
	}
	if resp, body := do(t, "DELETE", path, http.Header{"X-Owner": {"alice"}}, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE by id by alice: %s %s", resp.Status, body)
	}
	if _, err := env.st.Stat(bg, m.Area, "alice", m.ID); !errors.Is(err, fileserve.ErrNotFound) {
		t.Errorf("the file is still stored: %v", err)
	}
}

// One URL is revoked: it is refused (downloads and tool inputs alike),
// the file and its other URLs stay. A forged or foreign URL is refused.
func TestRevokeURL(t *testing.T) {
	env, q := manageEnv(t, false)
	m := env.putQuota(t, q, "alice", "a.txt", 10)
	u := env.signedURL(t, m)
	env.srv.now = func() time.Time { return time.Now().Add(time.Second) } // another token for the same file
	other := env.signedURL(t, m)
	if u == other {
		t.Fatal("two URLs of a file are the same")
	}
	do(t, "GET", u, nil, nil) // the token is cached once verified
	revoke := func(url string) (*http.Response, []byte) {
		b, _ := json.Marshal(transfer.RevokeRequest{URL: url})
		return do(t, "POST", env.ts.URL+transfer.RevokePath, http.Header{"Content-Type": {"application/json"}}, strings.NewReader(string(b)))
	}
	if resp, body := revoke(u); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke: %s %s", resp.Status, body)
	}
	if resp, body := do(t, "GET", u, nil, nil); resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "revoked") {
		t.Errorf("GET of the revoked URL: %s %s; want 403 saying revoked", resp.Status, body)
	}
	if _, _, own, err := env.srv.OpenURL(bg, u, "alice"); !own || err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("the revoked URL as a tool input: own %v, %v", own, err)
	}
	if resp, _ := do(t, "GET", other, nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("another URL of the file: %s, want 200", resp.Status)
	}
	for name, bad := range map[string]string{
		"forged token": u[:len(u)-4] + "AAAA",
		"foreign URL":  "https://elsewhere.test/files/" + m.ID + "/a.txt?token=x",
		"not a URL":    "%%%",
	} {
		if resp, body := revoke(bad); resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("revoke of a %s: %s %s; want 400 or 403", name, resp.Status, body)
		}
	}
}

// manageMaxRevocations is the revokers' cap of manageEnv.
const manageMaxRevocations = 3

// revokeFrom posts the revocation of u to env's server as if from the
// client address addr, and returns the answer.
func revokeFrom(t *testing.T, env *testEnv, u, addr string) *httptest.ResponseRecorder {
	t.Helper()
	b, _ := json.Marshal(transfer.RevokeRequest{URL: u})
	r := httptest.NewRequest(http.MethodPost, env.ts.URL+transfer.RevokePath, strings.NewReader(string(b)))
	r.RemoteAddr = addr
	w := httptest.NewRecorder()
	env.srv.ServeRevoke(w, r)
	return w
}

// Revocations are capped per revoker: the owner of the URLs, or for the
// anonymous owner the client address (an IPv6 /64). Past the cap the
// answer is 429 with Retry-After, saying what to do; another revoker is
// not held back, and a URL revoked already answers 204 and adds no record.
func TestRevokeCappedPerRevoker(t *testing.T) {
	env, q := manageEnv(t, false)
	urls := func(owner string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, env.signedURL(t, env.putQuota(t, q, owner, fmt.Sprintf("f%d.txt", i), 1)))
		}
		return out
	}
	records := func() int {
		infos, err := env.st.Records(bg, revocation.Kind, "*")
		if err != nil {
			t.Fatal(err)
		}
		return len(infos)
	}
	alice := urls("alice", manageMaxRevocations+1)
	for i, u := range alice[:manageMaxRevocations] {
		// From ever other addresses: the owner is who counts.
		if w := revokeFrom(t, env, u, fmt.Sprintf("192.0.2.%d:1000", i+1)); w.Code != http.StatusNoContent {
			t.Fatalf("revocation %d: %d %s", i, w.Code, w.Body)
		}
	}
	w := revokeFrom(t, env, alice[manageMaxRevocations], "192.0.2.99:1000")
	if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "DELETE the file") ||
		!strings.Contains(w.Body.String(), "AGENT_MAX_REVOCATIONS") || w.Header().Get("Retry-After") == "" {
		t.Fatalf("a revocation past alice's cap: %d %s (Retry-After %q); want 429 saying to delete the file or wait",
			w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	if resp, _ := do(t, "GET", alice[manageMaxRevocations], nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the refused revocation revoked: GET %s", resp.Status)
	}
	if w := revokeFrom(t, env, alice[0], "192.0.2.1:1000"); w.Code != http.StatusNoContent {
		t.Errorf("revoking a revoked URL again at the cap: %d %s; want 204", w.Code, w.Body)
	}
	if n := records(); n != manageMaxRevocations {
		t.Errorf("%d revocation records, want %d", n, manageMaxRevocations)
	}

	// The anonymous owner's URLs count per client address.
	anon := urls(AnonymousOwner, revocation.SharedOwnerFactor*manageMaxRevocations+1)
	for i, u := range anon[:manageMaxRevocations] {
		if w := revokeFrom(t, env, u, fmt.Sprintf("[2001:db8::%x]:1000", i+1)); w.Code != http.StatusNoContent {
			t.Fatalf("anonymous revocation %d: %d %s", i, w.Code, w.Body)
		}
	}
	if w := revokeFrom(t, env, anon[manageMaxRevocations], "[2001:db8::ffff]:1000"); w.Code != http.StatusTooManyRequests {
		t.Errorf("a revocation past the cap of a /64: %d %s; want 429", w.Code, w.Body)
	}
	for i, u := range anon[manageMaxRevocations : 2*manageMaxRevocations] {
		if w := revokeFrom(t, env, u, "198.51.100.7:1000"); w.Code != http.StatusNoContent {
			t.Errorf("another client's revocation %d: %d %s; want 204", i, w.Code, w.Body)
		}
	}
	if n := records(); n != 3*manageMaxRevocations {
		t.Errorf("%d revocation records, want %d", n, 3*manageMaxRevocations)
	}
	// And all addresses together, for the one anonymous owner, at most
	// SharedOwnerFactor times the cap: many addresses cannot grow the
	// list every replica reads twice a second without bound.
	shared := revocation.SharedOwnerFactor * manageMaxRevocations
	for i, u := range anon[2*manageMaxRevocations : shared] {
		if w := revokeFrom(t, env, u, fmt.Sprintf("203.0.113.%d:1000", i/manageMaxRevocations+1)); w.Code != http.StatusNoContent {
			t.Fatalf("revocation %d of a third or fourth client: %d %s; want 204", i, w.Code, w.Body)
		}
	}
	w = revokeFrom(t, env, anon[shared], "203.0.113.200:1000")
	if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "unauthenticated callers together") || w.Header().Get("Retry-After") == "" {
		t.Errorf("a fresh address's revocation past the anonymous owner's cap: %d %s; want 429 naming the shared cap", w.Code, w.Body)
	}
	if n := records(); n != manageMaxRevocations+shared {
		t.Errorf("%d revocation records, want %d", n, manageMaxRevocations+shared)
	}
}
