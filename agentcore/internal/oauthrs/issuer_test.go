package oauthrs

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agentura/agentura/agentcore/internal/urlfetch"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/internal/testkit/outage"
)

// agentURL is AGENT_PUBLIC_URL of the resource the tests make.
const agentURL = "https://agent.test"

// testIdP is an identity provider on loopback whose outage a test turns
// (outage.Server): publishing the keys of its JWKS, metadata naming them
// and an introspection endpoint.
type testIdP struct {
	*outage.Server
	t    *testing.T
	keys map[string]*rsa.PrivateKey

	mu        sync.Mutex
	published []string // the key ids of the JWKS
}

func newTestIdP(t *testing.T, kids ...string) *testIdP {
	t.Helper()
	p := &testIdP{t: t, keys: map[string]*rsa.PrivateKey{}, published: kids}
	for _, kid := range []string{"k1", "k2"} {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		p.keys[kid] = k
	}
	p.Server = outage.Start(t, http.HandlerFunc(p.serve))
	return p
}

func (p *testIdP) issuer() string { return p.URL() }

// reads is how many JWKS requests reached the provider.
func (p *testIdP) reads() int64 { return p.Requests("/jwks") }

// publish makes the JWKS hold kids.
func (p *testIdP) publish(kids ...string) {
	p.mu.Lock()
	p.published = kids
	p.mu.Unlock()
}

func (p *testIdP) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		json.NewEncoder(w).Encode(map[string]any{"issuer": p.issuer(), "jwks_uri": p.issuer() + "/jwks",
			"token_endpoint": p.issuer() + "/token", "introspection_endpoint": p.issuer() + "/introspect"})
	case "/jwks":
		b64 := base64.RawURLEncoding.EncodeToString
		p.mu.Lock()
		var keys []map[string]string
		for _, kid := range p.published {
			k := p.keys[kid]
			keys = append(keys, map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
				"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())})
		}
		p.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	case "/introspect":
		r.ParseForm()
		json.NewEncoder(w).Encode(map[string]any{"active": r.PostForm.Get("token") == "opaque-good", "sub": "opaque-user",
			"aud": []string{agentURL + "/mcp"}, "exp": time.Now().Add(time.Hour).Unix()})
	default:
		http.NotFound(w, r)
	}
}

// claims are a valid access token's for the agent.
func (p *testIdP) claims() jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"iss": p.issuer(), "sub": "alice", "aud": []string{agentURL + "/mcp"}, "scope": "tools:call",
		"iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()}
}

// token signs c with the key of signer, naming kid in its header, with
// the extra header members.
func (p *testIdP) token(c jwt.MapClaims, signer, kid string, header map[string]any) string {
	p.t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	tok.Header["kid"] = kid
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(p.keys[signer])
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

// testTimings are short ones, so that the tests wait seconds, not minutes;
// timeout stays long enough for a loopback answer on a busy machine.
var testTimings = timings{timeout: 2 * time.Second, retry: time.Second, recheck: time.Hour, refresh: time.Hour,
	unknownKID: time.Hour, readyWait: 2 * time.Second}

// resourceOf is the resource server of p, with testTimings.
func resourceOf(t *testing.T, p *testIdP, introspect bool) *Resource {
	t.Helper()
	opts := Options{Issuer: p.issuer(), PublicURL: agentURL}
	if introspect {
		opts.IntrospectionURL = p.issuer() + "/introspect"
	}
	o := New(opts, urlfetch.New([]string{p.Addr()}, time.Minute), slog.New(slog.NewTextHandler(io.Discard, nil)))
	o.t = testTimings
	o.client.Timeout = testTimings.timeout
	t.Cleanup(o.Close)
	return o
}

// readProvider is a provider publishing k1 and a resource server that has
// read it: a token of k1 verified.
func readProvider(t *testing.T) (*testIdP, *Resource) {
	t.Helper()
	p := newTestIdP(t, "k1")
	o := resourceOf(t, p, false)
	if err := verify(o, p.token(p.claims(), "k1", "k1", nil)); err != nil {
		t.Fatalf("a valid token while the provider answers: %v", err)
	}
	return p, o
}

// wantUnavailable fails unless err is the 503 of an unreadable issuer,
// told without the provider's address.
func wantUnavailable(t *testing.T, err error, p *testIdP, what string) {
	t.Helper()
	f, ok := errors.AsType[*fault.Fault](err)
	if !ok || !errors.Is(err, ErrIssuerUnavailable) || f.Reason != fault.IdentityProviderUnavailable {
		t.Fatalf("%s: %v, want the identity provider unavailable (503)", what, err)
	}
	if errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("%s: %v is a refusal of the token too", what, err)
	}
	if host, _, _ := net.SplitHostPort(p.Addr()); strings.Contains(f.Error(), host) || strings.Contains(f.Error(), outage.FailingAddress) {
		t.Errorf("%s: the words name an address: %q", what, f.Error())
	}
}

// wantRefused fails unless err refuses the token (401) saying want.
func wantRefused(t *testing.T, err error, want, what string) {
	t.Helper()
	if !errors.Is(err, auth.ErrInvalidToken) || errors.Is(err, ErrIssuerUnavailable) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want a refusal (401) saying %q", what, err, want)
	}
}

// verify checks tok with o, bounded as a request is.
func verify(o *Resource, tok string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := o.Verify(ctx, tok, nil)
	return err
}

// eventually retries check until it returns nil, for a minute at the most.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %v after a minute", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A valid token of a key the agent has not read yet, while the provider
// refuses connections, is answered 503 (not 401: the host would throw the
// token away and sign in again); tokens of the keys read before verify
// without waiting; tokens their own claims or a known key refuse stay
// 401; /readyz says degraded; and once the provider is back the new key
// verifies.
func TestProviderDownAnswersUnavailableNotRefused(t *testing.T) {
	p, o := readProvider(t)
	if err := o.Ready(context.Background()); err != nil {
		t.Fatalf("ready before the outage: %v", err)
	}

	p.publish("k1", "k2") // a rotation the agent has not read...
	p.Down()              // ...and the provider goes away
	fresh := p.token(p.claims(), "k2", "k2", nil)
	wantUnavailable(t, verify(o, fresh), p, "a token of a key not read yet")
	wantUnavailable(t, verify(o, fresh), p, "the same again at once")
	if err := verify(o, p.token(p.claims(), "k1", "k1", nil)); err != nil {
		t.Errorf("a token of a key read before the outage: %v", err)
	}

	expired := p.claims()
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	wantRefused(t, verify(o, p.token(expired, "k2", "k2", nil)), "expired", "an expired token of an unread key")
	foreign := p.claims()
	foreign["aud"] = []string{"https://other.test/mcp"}
	wantRefused(t, verify(o, p.token(foreign, "k2", "k2", nil)), "audience", "a token for another resource")
	other := p.claims()
	other["iss"] = "https://idp.other.test"
	wantRefused(t, verify(o, p.token(other, "k2", "k2", nil)), "iss", "a token of another issuer")
	wantRefused(t, verify(o, p.token(p.claims(), "k2", "k1", nil)), "signature", "a token naming a known key, signed with another")

	err := o.Ready(context.Background())
	if !isDegradedErr(err) {
		t.Fatalf("ready during the outage: %v, want degraded (cached keys still verify)", err)
	}
	if host, _, _ := net.SplitHostPort(p.Addr()); strings.Contains(err.Error(), host) {
		t.Errorf("the readiness text names the address: %s", err)
	}

	p.Up(t)
	eventually(t, "a token of the new key once the provider is back", func() error { return verify(o, fresh) })
	eventually(t, "ready once the provider is back", func() error { return o.Ready(context.Background()) })
}

// A provider that takes connections but never answers holds a request
// for the issuer timeout at the most (not 15 s), once: the requests
// after it are answered at once, without another request to it, until
// issuerRetry has passed. Answers of 503 and answers that are not a key
// set are unavailability too.
func TestHangingOrBrokenProviderIsBounded(t *testing.T) {
	p, o := readProvider(t)
	p.publish("k1", "k2")
	fresh := p.token(p.claims(), "k2", "k2", nil)
	for _, mode := range []outage.Mode{outage.Hanging, outage.Failing, outage.Garbling} {
		p.Set(mode)
		time.Sleep(o.t.retry) // past the last read's retry window
		before := p.reads()
		began := time.Now()
		wantUnavailable(t, verify(o, fresh), p, mode.String())
		if took := time.Since(began); took > 3*o.t.timeout {
			t.Errorf("%s: the request waited %s; the issuer timeout is %s", mode, took, o.t.timeout)
		}
		for range 10 {
			wantUnavailable(t, verify(o, fresh), p, mode.String()+", again")
		}
		if n := p.reads() - before; n != 1 {
			t.Errorf("%s: eleven requests read the key set %d times; want once per issuerRetry", mode, n)
		}
		if err := verify(o, p.token(p.claims(), "k1", "k1", nil)); err != nil {
			t.Errorf("%s: a token of the key read before: %v", mode, err)
		}
	}
}

// Before the provider was ever read, a token cannot be checked: 503, and
// /readyz not ready (no token can be checked at all), neither naming the
// provider's address.
func TestProviderNeverReadIsNotReady(t *testing.T) {
	p := newTestIdP(t, "k1")
	p.Down()
	o := resourceOf(t, p, false)
	wantUnavailable(t, verify(o, p.token(p.claims(), "k1", "k1", nil)), p, "the first token")
	err := o.Ready(context.Background())
	if err == nil || isDegradedErr(err) {
		t.Fatalf("ready with a provider never read: %v, want not ready", err)
	}
	if host, _, _ := net.SplitHostPort(p.Addr()); strings.Contains(err.Error(), host) {
		t.Errorf("the readiness text names the address: %s", err)
	}
	p.Up(t)
	eventually(t, "the first token once the provider answers", func() error { return verify(o, p.token(p.claims(), "k1", "k1", nil)) })
}

func isDegradedErr(err error) bool {
	d, ok := errors.AsType[interface {
		error
		Degraded() bool
	}](err)
	return ok && d.Degraded()
}

// Made-up key ids make at most one read of the key set per
// jwksUnknownKIDEvery while the provider answers (each is refused, 401).
func TestMadeUpKeyIDsReadOnce(t *testing.T) {
	p, o := readProvider(t)
	before := p.reads()
	for i := range 10 {
		wantRefused(t, verify(o, p.token(p.claims(), "k1", fmt.Sprintf("made-up-%d", i), nil)), "not one issuer", "a made-up key id")
	}
	if n := p.reads() - before; n != 1 {
		t.Errorf("ten made-up key ids read the key set %d times, want 1", n)
	}
}

// RFC 7515 §4.1.11: a token whose JWS header has crit is refused (401),
// whatever it lists, signed with a key the agent knows; it makes no read.
func TestCritHeaderRefused(t *testing.T) {
	p, o := readProvider(t)
	before := p.reads()
	for _, crit := range []any{[]string{"urn:example:unknown"}, []string{}, []string{"exp"}, "urn:example:unknown", nil} {
		wantRefused(t, verify(o, p.token(p.claims(), "k1", "k1", map[string]any{"crit": crit, "urn:example:unknown": true})), "crit",
			fmt.Sprintf("crit %v", crit))
		wantRefused(t, verify(o, p.token(p.claims(), "k1", "unknown-kid", map[string]any{"crit": crit})), "crit",
			fmt.Sprintf("crit %v of an unknown key", crit))
	}
	if n := p.reads() - before; n != 0 {
		t.Errorf("tokens with crit made %d reads of the key set", n)
	}
}

// An introspection endpoint that fails answers 503, once per issuerRetry
// (the requests meanwhile are not sent to it), and /readyz says degraded
// until it answers again.
func TestIntrospectionDownAnswersUnavailable(t *testing.T) {
	p := newTestIdP(t, "k1")
	o := resourceOf(t, p, true)
	if err := verify(o, "opaque-good"); err != nil {
		t.Fatalf("an active opaque token: %v", err)
	}
	wantRefused(t, verify(o, "opaque-bad"), "not active", "an inactive opaque token")
	if err := o.Ready(context.Background()); err != nil {
		t.Fatalf("ready: %v", err)
	}
	p.Set(outage.Failing)
	before := p.Requests("/introspect")
	wantUnavailable(t, verify(o, "opaque-new-1"), p, "introspection answering 503")
	for i := range 10 {
		wantUnavailable(t, verify(o, fmt.Sprintf("opaque-new-%d", i+2)), p, "introspection answering 503, again")
	}
	if n := p.Requests("/introspect") - before; n != 1 {
		t.Errorf("eleven opaque tokens asked the failing endpoint %d times; want once per issuerRetry", n)
	}
	if err := verify(o, "opaque-good"); err != nil {
		t.Errorf("an opaque token answered before (cached): %v", err)
	}
	if err := o.Ready(context.Background()); !isDegradedErr(err) {
		t.Errorf("ready while introspection fails: %v, want degraded", err)
	}
	p.Set(outage.Serving)
	eventually(t, "a new opaque token once introspection answers", func() error {
		if err := verify(o, "opaque-new-1"); !errors.Is(err, auth.ErrInvalidToken) {
			return fmt.Errorf("%v, want the endpoint's answer: not active", err)
		}
		return nil
	})
	if err := o.Ready(context.Background()); err != nil {
		t.Errorf("ready once introspection answers: %v", err)
	}
}
