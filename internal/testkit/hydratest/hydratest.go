// Package hydratest runs a real identity provider for tests: Ory Hydra v2
// (built from the Go module proxy by .ci/setup.d/40-hydra.sh, or `make
// hydra`) on loopback with an in-memory database, and the demo login and
// consent app (internal/tools/demologin) in-process. It creates OAuth clients,
// signs users in the way a browser would (following the redirects and
// submitting the login form), rotates the provider's signing key and
// mints client-credentials tokens. Hydra stops, with its process group,
// when the test ends.
package hydratest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
	"github.com/agentura/agentura/internal/tools/demologin"
)

// AccessTokenKeySet is the JWK set Hydra signs access tokens with.
const AccessTokenKeySet = "hydra.jwt.access-token"

// Users are the demo users every Provider knows, with their passwords.
var Users = map[string]string{"alice": "alice-password", "bob": "bob-password"}

// Provider is a running Hydra with its login app.
type Provider struct {
	// Issuer is Hydra's public URL, the iss of its tokens (no trailing slash).
	Issuer string
	// AdminURL is Hydra's admin API.
	AdminURL string
	// LoginURL is the demo login app's base URL.
	LoginURL string

	logs string // the file Hydra's output goes to
	http *http.Client
	stop func() // kills Hydra and waits for it
}

// Binary returns the path of the hydra command: on PATH, else in
// $(go env GOPATH)/bin where .ci/setup.d/40-hydra.sh puts it. A missing
// one skips the test (fails it under AGENTURA_REQUIRE_TOOLS=1).
func Binary(tb testing.TB) string {
	tb.Helper()
	if p, err := exec.LookPath("hydra"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := procgroup.Output(exec.Command("go", "env", "GOPATH")); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		if p := filepath.Join(dir, "bin", "hydra"); fileExists(p) {
			return p
		}
	}
	requiretool.Missing(tb, "hydra (Ory Hydra v2.3.0, the identity provider of the OAuth tests) is not installed: run `make deps` "+
		"(.ci/setup.d/40-hydra.sh builds it from the Go module proxy with the sqlite tag) or `make hydra`")
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Option changes how Start configures Hydra.
type Option func(*options)

// options are what the Options set: Hydra's configuration, as environment
// variables (Hydra reads a key a.b from A_B).
type options struct {
	env []string
}

// AccessTokenTTL makes the access tokens Hydra issues expire after d (its
// ttl.access_token, an hour by default): the tests of refreshing tokens
// wait past it.
func AccessTokenTTL(d time.Duration) Option {
	return func(o *options) { o.env = append(o.env, "TTL_ACCESS_TOKEN="+d.String()) }
}

// Start runs Hydra and the login app until the test ends, configured by
// opts.
func Start(tb testing.TB, opts ...Option) *Provider {
	tb.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	bin := Binary(tb)
	pub, admin := freePort(tb), freePort(tb)
	p := &Provider{
		Issuer:   "http://127.0.0.1:" + pub,
		AdminURL: "http://127.0.0.1:" + admin,
		http:     &http.Client{Timeout: 30 * time.Second, Transport: freshConnections(nil)},
	}
	login, err := demologin.New(demologin.Config{AdminURL: p.AdminURL, PublicURL: p.Issuer, Users: Users})
	if err != nil {
		tb.Fatal(err)
	}
	ls := httptest.NewServer(login)
	tb.Cleanup(ls.Close)
	p.LoginURL = ls.URL

	secret := make([]byte, 24)
	rand.Read(secret)
	cmd := exec.Command(bin, "serve", "all", "--dev", "--sqa-opt-out")
	cmd.Env = append(os.Environ(),
		"DSN=memory",
		"SECRETS_SYSTEM="+hex.EncodeToString(secret),
		"URLS_SELF_ISSUER="+p.Issuer,
		"URLS_LOGIN="+p.LoginURL+"/login",
		"URLS_CONSENT="+p.LoginURL+"/consent",
		"STRATEGIES_ACCESS_TOKEN=jwt",
		"OAUTH2_PKCE_ENFORCED_FOR_PUBLIC_CLIENTS=true",
		"SERVE_PUBLIC_HOST=127.0.0.1", "SERVE_PUBLIC_PORT="+pub,
		"SERVE_ADMIN_HOST=127.0.0.1", "SERVE_ADMIN_PORT="+admin,
		"SQA_OPT_OUT=true",
		"LOG_LEVEL=warn",
	)
	cmd.Env = append(cmd.Env, o.env...)
	logs, err := os.CreateTemp(tb.TempDir(), "hydra-*.log")
	if err != nil {
		tb.Fatal(err)
	}
	defer logs.Close() // the child holds its own descriptor
	p.logs = logs.Name()
	cmd.Stdout, cmd.Stderr = logs, logs
	// Its own process group, killed whole at the end; and killed with the
	// test binary should that die first (internal/testkit/procgroup).
	g, err := procgroup.Start(tb, cmd)
	if err != nil {
		tb.Fatalf("start hydra: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.stop = func() {
		g.Kill()
		<-exited
	}
	tb.Cleanup(p.stop)
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := p.http.Get(p.Issuer + "/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			tb.Fatalf("hydra exited at start-up:\n%s", p.Logs())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("hydra not ready within 90s:\n%s", p.Logs())
		}
	}
	// The access-token signing key made now, as an ES256 key: left to
	// itself Hydra makes a 4096-bit RSA key inside the first request that
	// needs one, and on a loaded machine that outlasted the 10 s its
	// server gives a request to be answered (the sign-in then failed).
	if err := p.Admin(context.Background(), http.MethodPost, "/admin/keys/"+AccessTokenKeySet,
		map[string]string{"alg": signingAlg, "use": "sig", "kid": "k-" + hex.EncodeToString(randBytes(6))}, nil); err != nil {
		tb.Fatalf("create Hydra's access-token signing key: %v\n%s", err, p.Logs())
	}
	// Its key set read once now: Hydra makes its ID-token key (RSA) inside
	// the first request for its JWKS, seconds on a loaded machine, which
	// an agent's first read would otherwise wait for past the 5 s a
	// resource server gives its provider (it then answers 503).
	// Hydra cuts a request it has not answered within 10 s (EOF here) while
	// the key is still being made: read again until it is there.
	deadline = time.Now().Add(90 * time.Second)
	for {
		resp, err := p.http.Get(p.Issuer + "/.well-known/jwks.json")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
			err = fmt.Errorf("HTTP %s", resp.Status)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("read Hydra's key set: %v\n%s", err, p.Logs())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// signingAlg is the algorithm of the access-token keys the tests make:
// ES256, made in microseconds where RSA-4096 takes seconds.
const signingAlg = "ES256"

// Stop kills Hydra (the login app stays) and returns once it has exited:
// its ports refuse connections from then on, as a provider that went
// down does. Its state is in memory, so it cannot be started again.
func (p *Provider) Stop() { p.stop() }

// Logs returns what Hydra printed.
func (p *Provider) Logs() string {
	b, _ := os.ReadFile(p.logs)
	return string(b)
}

func freePort(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// Client is an OAuth client to register (Hydra's admin API field names).
type Client struct {
	ID           string   `json:"client_id"`
	Secret       string   `json:"client_secret,omitempty"`
	Name         string   `json:"client_name,omitempty"`
	GrantTypes   []string `json:"grant_types"`
	Response     []string `json:"response_types,omitempty"`
	RedirectURIs []string `json:"redirect_uris,omitempty"`
	Scope        string   `json:"scope"`
	Audience     []string `json:"audience"`
	AuthMethod   string   `json:"token_endpoint_auth_method"`
	Strategy     string   `json:"access_token_strategy,omitempty"`
}

// PublicClient registers a public client of a native host (authorization
// code + PKCE + refresh, loopback redirect on any port) allowed scope and
// audience.
func (p *Provider) PublicClient(tb testing.TB, id, scope string, audience ...string) {
	tb.Helper()
	p.CreateClient(tb, Client{ID: id, Name: id, GrantTypes: []string{"authorization_code", "refresh_token"}, Response: []string{"code"},
		RedirectURIs: []string{"http://127.0.0.1/callback"}, Scope: scope + " offline_access", Audience: audience, AuthMethod: "none"})
}

// ServiceClient registers a confidential client of an agent (client
// credentials) and returns its secret.
func (p *Provider) ServiceClient(tb testing.TB, id, scope string, audience ...string) string {
	tb.Helper()
	secret := hex.EncodeToString(randBytes(16))
	p.CreateClient(tb, Client{ID: id, Secret: secret, Name: id, GrantTypes: []string{"client_credentials"}, Scope: scope,
		Audience: audience, AuthMethod: "client_secret_basic"})
	return secret
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// CreateClient registers c.
func (p *Provider) CreateClient(tb testing.TB, c Client) {
	tb.Helper()
	if c.Strategy == "" {
		c.Strategy = "jwt"
	}
	if err := p.Admin(context.Background(), http.MethodPost, "/admin/clients", c, nil); err != nil {
		tb.Fatalf("create OAuth client %s: %v", c.ID, err)
	}
}

// Admin calls Hydra's admin API; out, when not nil, receives the JSON answer.
func (p *Provider) Admin(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.AdminURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// KeyIDs returns the ids of the access-token signing keys Hydra holds.
func (p *Provider) KeyIDs(tb testing.TB) []string {
	tb.Helper()
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	if err := p.Admin(context.Background(), http.MethodGet, "/admin/keys/"+AccessTokenKeySet, nil, &set); err != nil {
		tb.Fatalf("read Hydra's signing keys: %v", err)
	}
	var ids []string
	for _, k := range set.Keys {
		if !strings.HasPrefix(k.Kid, "public:") && !contains(ids, k.Kid) {
			ids = append(ids, k.Kid)
		}
	}
	return ids
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// RotateKey makes a new access-token signing key, which signs from now on,
// and retires (deletes) every older one, as an operator rotating keys
// does. It returns the new key's id.
func (p *Provider) RotateKey(tb testing.TB) string {
	tb.Helper()
	old := p.KeyIDs(tb)
	kid := "k-" + hex.EncodeToString(randBytes(6))
	if err := p.Admin(context.Background(), http.MethodPost, "/admin/keys/"+AccessTokenKeySet,
		map[string]string{"alg": signingAlg, "use": "sig", "kid": kid}, nil); err != nil {
		tb.Fatalf("create a signing key: %v", err)
	}
	for _, k := range old {
		if err := p.Admin(context.Background(), http.MethodDelete, "/admin/keys/"+AccessTokenKeySet+"/"+url.PathEscape(k), nil, nil); err != nil {
			tb.Fatalf("retire signing key %s: %v", k, err)
		}
	}
	return kid
}

// ClientCredentialsToken asks for a token of a service client with the
// given audience (Hydra's parameter; RFC 8707's resource is sent too).
func (p *Provider) ClientCredentialsToken(tb testing.TB, id, secret, scope, audience string) string {
	tb.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}, "audience": {audience}, "resource": {audience}}
	req, _ := http.NewRequest(http.MethodPost, p.Issuer+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := p.http.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &tok) != nil || tok.AccessToken == "" {
		tb.Fatalf("client credentials token of %s: %s: %s", id, resp.Status, b)
	}
	return tok.AccessToken
}

// Browser is a user agent that signs a user in at the demo login page.
type Browser struct {
	User, Password string
	// Deliver makes SignIn also GET the redirect to the client (a loopback
	// listener of a host waiting for the code), as a browser would.
	Deliver bool
	// Transport makes the browser's requests (one that trusts the
	// provider's CA); nil means http.DefaultTransport.
	Transport http.RoundTripper
}

var challengeField = regexp.MustCompile(`name="login_challenge" value="([^"]*)"`)

// SignIn follows an authorization URL through Hydra and the login app,
// submits the login form, and returns the URL Hydra finally redirects to
// (the client's redirect URI with code and state, or error).
func (b Browser) SignIn(ctx context.Context, authURL string) (*url.URL, error) {
	start, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	jar, _ := cookiejar.New(nil)
	var final *url.URL
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: freshConnections(b.Transport), CheckRedirect: func(req *http.Request, via []*http.Request) error {
		// The provider's and the login app's pages are followed; a
		// redirect anywhere else is the answer to the client.
		if req.URL.Host == start.Host || strings.HasSuffix(req.URL.Path, "/login") || strings.HasSuffix(req.URL.Path, "/consent") {
			return nil
		}
		final = req.URL
		return http.ErrUseLastResponse
	}}
	resp, err := get(ctx, hc, authURL)
	if err != nil {
		return nil, err
	}
	if final == nil {
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := challengeField.FindSubmatch(page)
		if m == nil {
			return nil, fmt.Errorf("no login form at %s (%s): %.400s", resp.Request.URL, resp.Status, page)
		}
		form := url.Values{"login_challenge": {html.UnescapeString(string(m[1]))}, "username": {b.User}, "password": {b.Password}, "action": {"accept"}}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, resp.Request.URL.String(), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err = hc.Do(req)
		if err != nil {
			return nil, err
		}
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if final == nil {
		return nil, fmt.Errorf("the sign-in ended at %s (%s) without a redirect to the client: %.400s", resp.Request.URL, resp.Status, body)
	}
	if b.Deliver {
		r, err := get(ctx, &http.Client{Timeout: 30 * time.Second}, final.String())
		if err != nil {
			return final, fmt.Errorf("deliver the code to %s: %w", final.Host, err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return final, nil
}

func get(ctx context.Context, hc *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return hc.Do(req)
}

// ErrDenied is returned by Code when the provider answered with an error.
var ErrDenied = errors.New("authorization refused")

// Code reads code, state and iss from the redirect SignIn returned.
func Code(u *url.URL) (code, state, iss string, err error) {
	q := u.Query()
	if e := q.Get("error"); e != "" {
		return "", "", "", fmt.Errorf("%w: %s: %s", ErrDenied, e, q.Get("error_description"))
	}
	return q.Get("code"), q.Get("state"), q.Get("iss"), nil
}

// freshConnections is rt (nil: http.DefaultTransport) sending each request
// on a connection of its own. Hydra closes idle connections, and on a loaded
// machine a request sent on one as it closed failed (EOF on a POST to the
// admin API) or, being a GET, was sent again by net/http, which Hydra
// refuses for a login or consent verifier it has seen once ("already been
// used").
func freshConnections(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	t, ok := rt.(*http.Transport)
	if !ok {
		return rt
	}
	t = t.Clone()
	t.DisableKeepAlives = true
	return t
}
