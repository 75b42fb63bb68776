package attack

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// hostileIdP is an identity provider the attacker shapes: under each issuer
// path it serves RFC 8414 metadata and a JWKS, honest or not, and counts
// the reads of each key set. Its documents name the host they were asked
// at, so that another server may serve its handler (idp_down_test.go).
type hostileIdP struct {
	srv     *httptest.Server
	key     *rsa.PrivateKey
	next    *rsa.PrivateKey // the key of a rotation, k2: in the JWKS once rotated is set
	rotated atomic.Bool
	reads   map[string]*atomic.Int64 // JWKS reads by issuer path
	// trap counts requests to a loopback server the agents are not allowed
	// to reach (the SSRF issuer's jwks_uri).
	trap     *httptest.Server
	trapHits atomic.Int64
}

func newHostileIdP(t *testing.T) *hostileIdP {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	next, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	h := &hostileIdP{key: key, next: next, reads: map[string]*atomic.Int64{}}
	for _, p := range []string{"good", "foreign", "big", "ssrf"} {
		h.reads[p] = &atomic.Int64{}
	}
	h.trap = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h.trapHits.Add(1)
		h.writeJWKS(w)
	}))
	t.Cleanup(h.trap.Close)
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hostileIdP) issuer(name string) string { return h.srv.URL + "/" + name }

func (h *hostileIdP) serve(w http.ResponseWriter, r *http.Request) {
	if name, ok := strings.CutPrefix(r.URL.Path, "/.well-known/oauth-authorization-server/"); ok {
		iss := "http://" + r.Host + "/" + name
		meta := map[string]any{
			"issuer": iss, "jwks_uri": iss + "/jwks",
			"authorization_endpoint": iss + "/auth", "token_endpoint": iss + "/token",
			"code_challenge_methods_supported": []string{"S256"},
		}
		switch name {
		case "foreign":
			meta["issuer"] = "https://idp.evil.test" // a document for another issuer
		case "ssrf":
			meta["jwks_uri"] = h.trap.URL + "/jwks" // a loopback service the agent may not reach
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(meta)
		return
	}
	name, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/jwks")
	if c := h.reads[name]; ok && c != nil {
		c.Add(1)
		if name == "big" { // a key set of 4 MiB, streamed without a length
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"keys":[`)
			pad := strings.Repeat(`{"kty":"oct","k":"`+strings.Repeat("A", 4000)+`"},`, 1024)
			fmt.Fprint(w, pad)
			h.key0(w)
			fmt.Fprint(w, `]}`)
			return
		}
		h.writeJWKS(w)
		return
	}
	http.NotFound(w, r)
}

func (h *hostileIdP) writeJWKS(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"keys":[`)
	h.key0(w)
	if h.rotated.Load() {
		fmt.Fprint(w, ",")
		writeJWK(w, "k2", h.next)
	}
	fmt.Fprint(w, `]}`)
}

// key0 writes the provider's first public key, kid k1.
func (h *hostileIdP) key0(w http.ResponseWriter) { writeJWK(w, "k1", h.key) }

// writeJWK writes the public part of key as a JWK named kid.
func writeJWK(w io.Writer, kid string, key *rsa.PrivateKey) {
	b64 := base64.RawURLEncoding.EncodeToString
	json.NewEncoder(w).Encode(map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())})
}

// claims are an access token's for the agent at base from issuer iss.
func accessClaims(iss, base string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"iss": iss, "sub": "mallory", "aud": []string{base + "/mcp"}, "scp": []string{"tools:call", "files:read", "files:write"},
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()}
}

// sign signs claims with the provider's key under kid.
func (h *hostileIdP) sign(t *testing.T, c jwt.MapClaims, kid string) string {
	return signRS256(t, h.key, c, map[string]any{"kid": kid})
}

// signRS256 signs claims with key, the header holding header's members
// besides alg and typ (a kid of "" is left out).
func signRS256(t *testing.T, key *rsa.PrivateKey, c jwt.MapClaims, header map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	for k, v := range header {
		if v != "" {
			tok.Header[k] = v
		}
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// listTools posts tools/list to a's /mcp with bearer tok.
func listTools(t *testing.T, a *mcptest.Agent, tok string) reply {
	t.Helper()
	return do(t, http.MethodPost, a.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`),
		"Authorization", "Bearer "+tok, "Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		"MCP-Protocol-Version", "2025-11-25")
}

// refusedToken fails unless r refuses its token: 401 with an
// invalid_token challenge.
func refusedToken(t *testing.T, r reply, why string) {
	t.Helper()
	if r.status != http.StatusUnauthorized {
		t.Fatalf("%s: want 401, got %s", why, r)
	}
	if !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("%s: challenge %q", why, r.header.Get("WWW-Authenticate"))
	}
}

// TestOAuthTokenAttacks runs the token attacks on AGENT_AUTH=oauth against
// the built file agent: algorithm confusion with the JWKS's public key,
// "none", key ids that are paths, SQL or URLs, keys and key-set URLs in
// the token's own header, a key set fetched through the SSRF guard, an
// oversized key set, and metadata naming a foreign issuer. A valid token
// passes first, so that every refusal is the check's and not the set-up's.
func TestOAuthTokenAttacks(t *testing.T) {
	h := newHostileIdP(t)
	bin := fileagentBinary(t)
	idpHost := strings.TrimPrefix(h.srv.URL, "http://")
	start := func(name string) *mcptest.Agent {
		a := mcptest.NewAgent(t, bin, "AGENT_AUTH=oauth", "AGENT_OAUTH_ISSUER="+h.issuer(name),
			"AGENT_FETCH_ALLOW_HOSTS="+idpHost, "AGENT_MCP_STATELESS=true", "AGENT_SIGNING_KEY="+signingKey)
		a.Start(t)
		a.WaitFor(t, "/healthz", http.StatusOK)
		return a
	}
	good := start("good")
	send := func(a *mcptest.Agent, tok string) reply { return listTools(t, a, tok) }
	refused401 := refusedToken

	if r := send(good, h.sign(t, accessClaims(h.issuer("good"), good.URL), "k1")); r.status != http.StatusOK {
		t.Fatalf("a valid token is refused, the set-up is wrong: %s\n%s", r, good.Logs())
	}

	t.Run("alg confusion: HS256 signed with the JWKS's public key", func(t *testing.T) {
		der, _ := x509.MarshalPKIXPublicKey(&h.key.PublicKey)
		pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
		for label, secret := range map[string][]byte{"PEM": pemKey, "DER": der, "modulus": h.key.N.Bytes()} {
			tok := jwt.NewWithClaims(jwt.SigningMethodHS256, accessClaims(h.issuer("good"), good.URL))
			tok.Header["kid"] = "k1"
			s, _ := tok.SignedString(secret)
			refused401(t, send(good, s), "HS256 with the public key as "+label)
		}
	})
	t.Run("alg none", func(t *testing.T) {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, accessClaims(h.issuer("good"), good.URL))
		tok.Header["kid"] = "k1"
		s, _ := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		refused401(t, send(good, s), "alg none")
	})
	t.Run("kid injection and key-set URLs in the header", func(t *testing.T) {
		other, _ := rsa.GenerateKey(rand.Reader, 2048)
		before := h.reads["good"].Load()
		for _, kid := range []string{"../../../../etc/passwd", "' OR '1'='1", "k1\x00", h.trap.URL + "/jwks", "k2", "k3", "k4", "k5", "k6", "k7"} {
			refused401(t, send(good, h.sign(t, accessClaims(h.issuer("good"), good.URL), kid)), fmt.Sprintf("kid %q", kid))
		}
		// A token of the attacker's own key, named in its header by jku/jwk/x5u.
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, accessClaims(h.issuer("good"), good.URL))
		b64 := base64.RawURLEncoding.EncodeToString
		tok.Header["jku"], tok.Header["x5u"] = h.trap.URL+"/jwks", h.trap.URL+"/x5u"
		tok.Header["jwk"] = map[string]string{"kty": "RSA", "n": b64(other.N.Bytes()), "e": "AQAB"}
		s, _ := tok.SignedString(other)
		refused401(t, send(good, s), "attacker's key in the header")
		if n := h.reads["good"].Load() - before; n > 1 {
			t.Errorf("ten unknown key ids made the agent read the key set %d times; at most once per 10 s", n)
		}
	})
	t.Run("crit header naming an extension the agent does not understand", func(t *testing.T) {
		// RFC 7515 §4.1.11: signed by the provider's own key, refused all
		// the same; an empty crit, or one naming a registered parameter,
		// is invalid, and refused too.
		for _, crit := range []any{[]string{"urn:example:must-understand"}, []string{}, []string{"exp"}} {
			tok := signRS256(t, h.key, accessClaims(h.issuer("good"), good.URL), map[string]any{"kid": "k1", "crit": crit, "urn:example:must-understand": true})
			r := send(good, tok)
			refused401(t, r, fmt.Sprintf("crit %v", crit))
			if !strings.Contains(string(r.body), "crit") {
				t.Errorf("crit %v: the refusal does not say why: %s", crit, r)
			}
		}
	})
	t.Run("expired, foreign audience, foreign issuer", func(t *testing.T) {
		c := accessClaims(h.issuer("good"), good.URL)
		c["exp"] = time.Now().Add(-time.Hour).Unix()
		refused401(t, send(good, h.sign(t, c, "k1")), "expired")
		c = accessClaims(h.issuer("good"), "https://other.agent.test")
		refused401(t, send(good, h.sign(t, c, "k1")), "foreign audience")
		c = accessClaims(h.issuer("foreign"), good.URL)
		refused401(t, send(good, h.sign(t, c, "k1")), "foreign issuer")
	})

	// The hostile providers: the agent never takes a token of theirs.
	for _, bad := range []struct{ name, why string }{
		{"foreign", "metadata naming a foreign issuer"},
		{"big", "a key set over the size cap"},
		{"ssrf", "a key set on an address the SSRF guard refuses"},
	} {
		t.Run(bad.why, func(t *testing.T) {
			a := start(bad.name)
			r := send(a, h.sign(t, accessClaims(h.issuer(bad.name), a.URL), "k1"))
			if r.status != http.StatusServiceUnavailable {
				t.Fatalf("want 503 (the provider cannot be used), got %s", r)
			}
			if rz := do(t, http.MethodGet, a.URL+"/readyz", nil); rz.status != http.StatusServiceUnavailable || !strings.Contains(string(rz.body), "identity_provider") {
				t.Errorf("readyz: %s", rz)
			}
			if bad.name == "foreign" && h.reads["foreign"].Load() != 0 {
				t.Errorf("the key set of a provider whose metadata names another issuer was read")
			}
		})
	}
	if n := h.trapHits.Load(); n != 0 {
		t.Errorf("the agents reached the forbidden loopback service %d times", n)
	}
}
