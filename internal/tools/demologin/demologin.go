// Package demologin is the login and consent step of the demonstration
// identity provider (Ory Hydra) that `make up-auth` and the OAuth tests run.
// Hydra has no user store and no pages of its own: it sends the browser
// here with a login challenge, then a consent challenge, and this app
// answers each through Hydra's admin API.
//
// THE USER STORE HERE IS A DEMO: a fixed list of users and passwords from
// the environment, kept in memory. Do not put it in front of real users;
// point the agents at your own identity provider instead (docs/security.md).
//
// Consent is given at once for what the client asked and may have. Hydra
// v2 ignores the RFC 8707 resource parameter that MCP clients send, so the
// consent step reads it from the authorization request and grants it as
// the token's audience when the client is allowed that audience (Hydra's
// own audience rule: same scheme and host, and the path equal or below).
//
// The login page's Content-Security-Policy lets its form lead exactly where
// the sign-in goes. Its form posts to the page itself, which answers with a
// 302 to Hydra; Hydra sends the browser to the consent step here, and from
// there, through Hydra again, to the client's redirect URI. Chromium applies
// form-action to every redirect of the navigation a form starts, so the
// policy names those three: 'self', Hydra's public origin (Config.PublicURL)
// and the origin of the redirect URI the client asked for (Hydra checked it
// against the client's registered ones before it sent the browser here).
package demologin

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Config configures the app.
type Config struct {
	// AdminURL is Hydra's admin API, e.g. http://127.0.0.1:4445.
	AdminURL string
	// PublicURL is Hydra's public URL as the browser reaches it, its issuer
	// (e.g. https://localhost:4444): the login form's answer redirects there,
	// so its origin is in the login page's form-action.
	PublicURL string
	// Users maps each demo user's name to its password.
	Users map[string]string
	// Client talks to the admin API; nil means a client with a timeout.
	Client *http.Client
}

// ParseUsers reads the DEMOLOGIN_USERS form "alice:secret1,bob:secret2".
func ParseUsers(s string) (map[string]string, error) {
	users := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, pw, ok := strings.Cut(pair, ":")
		if !ok || name == "" || pw == "" {
			return nil, fmt.Errorf("%q is not user:password", pair)
		}
		users[name] = pw
	}
	if len(users) == 0 {
		return nil, errors.New("no users: give user:password pairs, comma-separated")
	}
	return users, nil
}

// app is the handler New returns.
type app struct {
	cfg       Config
	idpOrigin string // PublicURL's origin, a CSP source
}

// New returns the app's handler: GET and POST /login, GET /consent, and
// GET /healthz.
func New(cfg Config) (http.Handler, error) {
	if cfg.AdminURL == "" {
		return nil, errors.New("demologin: the Hydra admin URL is required")
	}
	if len(cfg.Users) == 0 {
		return nil, errors.New("demologin: no users")
	}
	if cfg.PublicURL == "" {
		return nil, errors.New("demologin: Hydra's public URL is required (the login form's answer redirects there)")
	}
	idp, ok := formTarget(cfg.PublicURL)
	if u, err := url.Parse(cfg.PublicURL); !ok || err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("demologin: Hydra's public URL %q is not an http or https URL with a host", cfg.PublicURL)
	}
	cfg.AdminURL = strings.TrimRight(cfg.AdminURL, "/")
	cfg.Client = cmp.Or(cfg.Client, &http.Client{Timeout: 15 * time.Second})
	a := &app{cfg: cfg, idpOrigin: idp}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", a.loginPage)
	mux.HandleFunc("POST /login", a.login)
	mux.HandleFunc("GET /consent", a.consent)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return mux, nil
}

var loginForm = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in (demo)</title></head>
<body>
<p><strong>Demo user store.</strong> This page belongs to agentura's demonstration identity provider: its users are a
fixed list, not for real use.</p>
<p>{{.Client}} asks to act for you{{if .Scopes}} with: {{.Scopes}}{{end}}.</p>
{{if .Error}}<p role="alert">{{.Error}}</p>{{end}}
<form method="post" action="login">
<input type="hidden" name="login_challenge" value="{{.Challenge}}">
<label>User <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit" name="action" value="accept">Sign in</button>
<button type="submit" name="action" value="deny" formnovalidate>Deny</button>
</form>
</body></html>
`))

// loginRequest is the part of Hydra's login request the page shows.
type loginRequest struct {
	Skip           bool     `json:"skip"`
	Subject        string   `json:"subject"`
	RequestedScope []string `json:"requested_scope"`
	RequestURL     string   `json:"request_url"` // the client's authorization request
	Client         struct {
		ClientID     string   `json:"client_id"`
		ClientName   string   `json:"client_name"`
		RedirectURIs []string `json:"redirect_uris"`
	} `json:"client"`
}

func (a *app) loginPage(w http.ResponseWriter, r *http.Request) {
	a.showLogin(w, r, r.URL.Query().Get("login_challenge"), "")
}

// showLogin shows the login page of challenge with the error msg; without
// one, a login request Hydra may skip is accepted at once.
func (a *app) showLogin(w http.ResponseWriter, r *http.Request, challenge, msg string) {
	var req loginRequest
	if err := a.admin(r.Context(), http.MethodGet, "/admin/oauth2/auth/requests/login?login_challenge="+url.QueryEscape(challenge), nil, &req); err != nil {
		http.Error(w, "the login request is not known to the identity provider: "+err.Error(), http.StatusBadRequest)
		return
	}
	if req.Skip && msg == "" { // Hydra already knows the user (a remembered session)
		a.acceptLogin(w, r, challenge, req.Subject)
		return
	}
	name := cmp.Or(req.Client.ClientName, req.Client.ClientID)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", a.loginPolicy(req))
	w.Header().Set("X-Frame-Options", "DENY")
	if msg != "" {
		w.WriteHeader(http.StatusUnauthorized)
	}
	loginForm.Execute(w, map[string]any{"Challenge": challenge, "Client": name, "Scopes": strings.Join(req.RequestedScope, " "), "Error": msg})
}

// loginPolicy is the login page's Content-Security-Policy: no content from
// anywhere, and a form that may lead only where the sign-in goes ('self',
// the provider's origin, the client's redirect URI; see the package doc).
// The redirect URI is the one of the authorization request, or, when the
// request names none, the client's registered ones (Hydra then takes the
// client's only one).
func (a *app) loginPolicy(req loginRequest) string {
	var redirects []string
	if u, err := url.Parse(req.RequestURL); err == nil && u.Query().Has("redirect_uri") {
		redirects = u.Query()["redirect_uri"]
	} else {
		redirects = req.Client.RedirectURIs
	}
	sources := []string{"'self'", a.idpOrigin}
	for _, r := range redirects {
		if src, ok := formTarget(r); ok && !slices.Contains(sources, src) {
			sources = append(sources, src)
		}
	}
	return "default-src 'none'; form-action " + strings.Join(sources, " ")
}

var (
	schemeChars = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)
	hostPort    = regexp.MustCompile(`^[a-z0-9.-]+(:[0-9]+)?$`)
)

// formTarget is the CSP source that allows navigating to the URL raw: its
// origin (scheme://host[:port]) for http and https, its scheme ("myapp:")
// for a native app's redirect URI. ok is false for a URL that cannot be
// written as a source (no scheme, no host, an IPv6 literal), which is then
// left out: the browser stops there, as it should for what it cannot check.
func formTarget(raw string) (src string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if !schemeChars.MatchString(scheme) {
		return "", false
	}
	if scheme != "http" && scheme != "https" {
		return scheme + ":", true
	}
	host := strings.ToLower(u.Host)
	if !hostPort.MatchString(host) {
		return "", false
	}
	return scheme + "://" + host, true
}

func (a *app) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	challenge := r.PostFormValue("login_challenge")
	if r.PostFormValue("action") == "deny" {
		a.finish(w, r, "/admin/oauth2/auth/requests/login/reject?login_challenge="+url.QueryEscape(challenge),
			map[string]any{"error": "access_denied", "error_description": "the user denied the sign-in"})
		return
	}
	user, pw := r.PostFormValue("username"), r.PostFormValue("password")
	want, ok := a.cfg.Users[user]
	if !ok || subtle.ConstantTimeCompare([]byte(pw), []byte(want)) != 1 {
		a.showLogin(w, r, challenge, "Unknown user or wrong password.")
		return
	}
	a.acceptLogin(w, r, challenge, user)
}

func (a *app) acceptLogin(w http.ResponseWriter, r *http.Request, challenge, subject string) {
	a.finish(w, r, "/admin/oauth2/auth/requests/login/accept?login_challenge="+url.QueryEscape(challenge),
		map[string]any{"subject": subject, "remember": false})
}

// consentRequest is the part of Hydra's consent request the app reads.
type consentRequest struct {
	RequestedScope    []string `json:"requested_scope"`
	RequestedAudience []string `json:"requested_access_token_audience"`
	RequestURL        string   `json:"request_url"`
	Client            struct {
		Audience []string `json:"audience"`
	} `json:"client"`
}

// consent grants what the client asked and may have, with the resource it
// named (RFC 8707) as the token's audience.
func (a *app) consent(w http.ResponseWriter, r *http.Request) {
	challenge := r.URL.Query().Get("consent_challenge")
	var req consentRequest
	if err := a.admin(r.Context(), http.MethodGet, "/admin/oauth2/auth/requests/consent?consent_challenge="+url.QueryEscape(challenge), nil, &req); err != nil {
		http.Error(w, "the consent request is not known to the identity provider: "+err.Error(), http.StatusBadRequest)
		return
	}
	audience := slices.Clone(req.RequestedAudience)
	if u, err := url.Parse(req.RequestURL); err == nil {
		for _, res := range u.Query()["resource"] {
			if allowedAudience(req.Client.Audience, res) && !slices.Contains(audience, res) {
				audience = append(audience, res)
			}
		}
	}
	a.finish(w, r, "/admin/oauth2/auth/requests/consent/accept?consent_challenge="+url.QueryEscape(challenge), map[string]any{
		"grant_scope":                 req.RequestedScope,
		"grant_access_token_audience": audience,
		"remember":                    false,
	})
}

// allowedAudience applies Hydra's audience rule: aud is allowed when an
// allowed entry has its scheme and host and a path equal to or above its.
func allowedAudience(allowed []string, aud string) bool {
	u, err := url.Parse(aud)
	if err != nil || u.Host == "" {
		return slices.Contains(allowed, aud)
	}
	for _, a := range allowed {
		v, err := url.Parse(a)
		if err != nil || !strings.EqualFold(v.Scheme, u.Scheme) || !strings.EqualFold(v.Host, u.Host) {
			continue
		}
		base := strings.TrimRight(v.Path, "/")
		if p := strings.TrimRight(u.Path, "/"); p == base || strings.HasPrefix(p, base+"/") {
			return true
		}
	}
	return false
}

// finish PUTs body to the admin path and sends the browser where Hydra says.
func (a *app) finish(w http.ResponseWriter, r *http.Request, path string, body any) {
	var out struct {
		RedirectTo string `json:"redirect_to"`
	}
	if err := a.admin(r.Context(), http.MethodPut, path, body, &out); err != nil {
		http.Error(w, "the identity provider refused: "+err.Error(), http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, out.RedirectTo, http.StatusFound)
}

// admin calls Hydra's admin API and decodes its JSON answer into out.
func (a *app) admin(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.cfg.AdminURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, out)
}
