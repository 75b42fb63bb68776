package attack

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/signing"
	"github.com/golang-jwt/jwt/v5"
)

// --- deleting and revoking another owner's file (issue 30) ------------------

// bearerOf is a valid caller token of the jwt agent for sub.
func bearerOf(t *testing.T, sub string) string {
	return callerToken(t, good(sub), jwt.SigningMethodHS256, []byte(jwtSecret))
}

// alicesFile stages a file for alice on the jwt agent and returns its URL.
func alicesFile(t *testing.T, e *env) string {
	t.Helper()
	r, u := upload(t, e.jwt, bearerOf(t, "alice"), "alice.txt", []byte("alice's private notes"))
	status(t, r, http.StatusCreated)
	return u
}

// stillThere checks that the file of u still downloads.
func stillThere(t *testing.T, u string) {
	t.Helper()
	if r := do(t, http.MethodGet, u, nil); r.status != http.StatusOK || string(r.body) != "alice's private notes" {
		t.Fatalf("the file did not survive the attack: %s", r)
	}
}

// revokeReq posts {"url": u} to base's revoke endpoint.
func revokeReq(t *testing.T, base, u string, hdr ...string) reply {
	b, _ := json.Marshal(map[string]string{"url": u})
	return do(t, http.MethodPost, base+"/files/revoke", strings.NewReader(string(b)), append([]string{"Content-Type", "application/json"}, hdr...)...)
}

// noLeak fails when an answer shows a secret or a server path.
func noLeak(t *testing.T, r reply) {
	t.Helper()
	if l := leaks(string(r.body)); len(l) > 0 {
		t.Errorf("the answer shows %v: %s", l, r)
	}
}

func deleteCases() []attackCase {
	c := func(name string, run func(t *testing.T, e *env)) attackCase {
		return attackCase{"delete and revoke", name, run}
	}
	return []attackCase{
		c("DELETE of another owner's URL with one's own bearer", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			r := do(t, http.MethodDelete, u, nil, "Authorization", "Bearer "+bearerOf(t, "mallory"))
			status(t, r, http.StatusForbidden)
			noLeak(t, r)
			stillThere(t, u)
		}),
		c("DELETE of another owner's file by id", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			r := do(t, http.MethodDelete, strings.Split(u, "?")[0], nil, "Authorization", "Bearer "+bearerOf(t, "mallory"))
			status(t, r, http.StatusNotFound)
			stillThere(t, u)
		}),
		c("DELETE of a URL without a bearer (jwt)", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			status(t, do(t, http.MethodDelete, u, nil), http.StatusUnauthorized)
			stillThere(t, u)
		}),
		c("DELETE with a forged bearer (alg none)", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			tok := callerToken(t, good("alice"), jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType)
			status(t, do(t, http.MethodDelete, u, nil, "Authorization", "Bearer "+tok), http.StatusUnauthorized)
			stillThere(t, u)
		}),
		c("DELETE with a bearer of another audience", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			cl := good("alice")
			cl["aud"] = "https://payroll.example"
			tok := callerToken(t, cl, jwt.SigningMethodHS256, []byte(jwtSecret))
			status(t, do(t, http.MethodDelete, u, nil, "Authorization", "Bearer "+tok), http.StatusUnauthorized)
			stillThere(t, u)
		}),
		c("DELETE by id without a token (no auth)", func(t *testing.T, e *env) {
			r, u := upload(t, e.open, "", "open.txt", []byte("open data"))
			status(t, r, http.StatusCreated)
			r = do(t, http.MethodDelete, strings.Split(u, "?")[0], nil)
			status(t, r, http.StatusForbidden)
			if !strings.Contains(string(r.body), "token") {
				t.Errorf("the refusal does not say a token is needed: %s", r)
			}
			status(t, do(t, http.MethodGet, u, nil), http.StatusOK)
		}),
		c("DELETE of a file with the token of another file", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			_, mine := upload(t, e.jwt, bearerOf(t, "alice"), "other.txt", []byte("x"))
			forged := strings.Split(u, "?")[0] + "?" + strings.Split(mine, "?")[1]
			status(t, do(t, http.MethodDelete, forged, nil, "Authorization", "Bearer "+bearerOf(t, "alice")), http.StatusForbidden)
			stillThere(t, u)
		}),
		c("DELETE with a tampered token", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			status(t, do(t, http.MethodDelete, u[:len(u)-3]+"AAA", nil, "Authorization", "Bearer "+bearerOf(t, "alice")), http.StatusForbidden)
			stillThere(t, u)
		}),
		c("DELETE with path tricks", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			pu, _ := url.Parse(u)
			for _, p := range []string{"/files/../uploads", "/files/" + strings.Repeat("a", 5000), "/files/%2e%2e/etc/passwd"} {
				r := do(t, http.MethodDelete, e.jwt.URL+p+"?"+pu.RawQuery, nil, "Authorization", "Bearer "+bearerOf(t, "alice"))
				if r.status < 400 || r.status >= 500 {
					t.Errorf("DELETE %s: %s", p, r)
				}
				noLeak(t, r)
			}
			stillThere(t, u)
		}),
		c("revoke with a forged token", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			status(t, revokeReq(t, e.jwt.URL, u[:len(u)-3]+"AAA"), http.StatusForbidden)
			stillThere(t, u)
		}),
		c("revoke another file's URL with one's own token", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			_, mine := upload(t, e.jwt, bearerOf(t, "mallory"), "m.txt", []byte("m"))
			forged := strings.Split(u, "?")[0] + "?" + strings.Split(mine, "?")[1]
			status(t, revokeReq(t, e.jwt.URL, forged), http.StatusForbidden)
			stillThere(t, u)
		}),
		c("revoke a URL of another deployment", func(t *testing.T, e *env) {
			r, u := upload(t, e.open, "", "o.txt", []byte("o"))
			status(t, r, http.StatusCreated)
			// The open agent's URL sent to the jwt agent: another audience.
			pu, _ := url.Parse(u)
			r = revokeReq(t, e.jwt.URL, e.jwt.URL+pu.Path+"?"+pu.RawQuery)
			status(t, r, http.StatusForbidden, http.StatusBadRequest)
			status(t, do(t, http.MethodGet, u, nil), http.StatusOK)
		}),
		c("revoke with an oversized or broken body", func(t *testing.T, e *env) {
			status(t, do(t, http.MethodPost, e.jwt.URL+"/files/revoke", strings.NewReader(`{"url":"`+strings.Repeat("a", 1<<20)+`"}`)), http.StatusBadRequest)
			status(t, do(t, http.MethodPost, e.jwt.URL+"/files/revoke", strings.NewReader(`{"url":`)), http.StatusBadRequest)
			status(t, do(t, http.MethodGet, e.jwt.URL+"/files/revoke", nil), http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusForbidden)
		}),
		c("revoking one URL leaves the owner's other URLs", func(t *testing.T, e *env) {
			r, u := upload(t, e.open, "", "two.txt", []byte("two urls"))
			status(t, r, http.StatusCreated)
			res := call(t, e.open, "", "inspect_file", map[string]any{"source": map[string]any{"name": "two.txt", "content": u}})
			if res.isError {
				t.Fatalf("inspect_file of the URL: %s", res.text)
			}
			status(t, revokeReq(t, e.open.URL, u), http.StatusNoContent)
			r = do(t, http.MethodGet, u, nil)
			status(t, r, http.StatusForbidden)
			if !strings.Contains(string(r.body), "revoked") {
				t.Errorf("the refusal does not say revoked: %s", r)
			}
			res = call(t, e.open, "", "inspect_file", map[string]any{"source": map[string]any{"name": "two.txt", "content": u}})
			refused(t, res, "revoked")
		}),
		c("the owner deletes: every URL of the file stops", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			status(t, do(t, http.MethodDelete, u, nil, "Authorization", "Bearer "+bearerOf(t, "alice")), http.StatusNoContent)
			status(t, do(t, http.MethodGet, u, nil), http.StatusNotFound)
			status(t, do(t, http.MethodDelete, u, nil, "Authorization", "Bearer "+bearerOf(t, "alice")), http.StatusNotFound)
		}),
		c("a token expired long ago cannot delete", func(t *testing.T, e *env) {
			u := alicesFile(t, e)
			pu, _ := url.Parse(u)
			exp := expiredToken(t, e.jwt.URL, strings.Split(strings.TrimPrefix(pu.Path, "/files/"), "/")[0], "alice")
			status(t, do(t, http.MethodDelete, e.jwt.URL+pu.Path+"?token="+exp, nil, "Authorization", "Bearer "+bearerOf(t, "alice")), http.StatusForbidden)
			stillThere(t, u)
		}),
	}
}

// expiredToken signs, with the agents' URL key, a download token of the
// agent at audience for owner's staged file id that expired an hour ago.
func expiredToken(t *testing.T, audience, id, owner string) string {
	t.Helper()
	keys, err := signing.ParseKeys(signingKey)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-2 * time.Hour)
	s, err := signing.NewSigner(audience, keys, signing.WithClock(func() time.Time { return past }))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Sign(signing.Claims{Owner: owner, FileID: id, Area: "staging", ExpiresAt: past.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
