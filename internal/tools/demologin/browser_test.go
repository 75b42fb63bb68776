package demologin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentura/agentura/internal/testkit/chromiumtest"
	"github.com/agentura/agentura/internal/tools/demologin"
)

// fakeHydra stands in for Ory Hydra around the real login app: its admin
// API (login and consent requests, accepted with a redirect_to) and its
// public origin, where the browser goes between the steps, which answers
// each step as Hydra does (a 302 to the consent page, then to the client's
// redirect URI). Origins are what the browser checks here; tokens are not.
type fakeHydra struct {
	admin, public *httptest.Server
	loginURL      string // the login app's base
	redirectURI   string // the client's redirect URI (another origin)
	mu            sync.Mutex
	hops          []string // the public paths the browser reached
}

func (h *fakeHydra) adminAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	auth := h.public.URL + "/oauth2/auth?client_id=agentura-cli&response_type=code&redirect_uri=" + url.QueryEscape(h.redirectURI)
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/admin/oauth2/auth/requests/login":
		json.NewEncoder(w).Encode(map[string]any{"skip": false, "requested_scope": []string{"tools:call"},
			"client": map[string]any{"client_id": "agentura-cli", "client_name": "agentura CLI"}, "request_url": auth})
	case r.Method == http.MethodPut && r.URL.Path == "/admin/oauth2/auth/requests/login/accept":
		json.NewEncoder(w).Encode(map[string]string{"redirect_to": h.public.URL + "/oauth2/auth?login_verifier=v1"})
	case r.Method == http.MethodGet && r.URL.Path == "/admin/oauth2/auth/requests/consent":
		json.NewEncoder(w).Encode(map[string]any{"requested_scope": []string{"tools:call"}, "request_url": auth})
	case r.Method == http.MethodPut && r.URL.Path == "/admin/oauth2/auth/requests/consent/accept":
		json.NewEncoder(w).Encode(map[string]string{"redirect_to": h.public.URL + "/oauth2/auth?consent_verifier=v2"})
	default:
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
	}
}

func (h *fakeHydra) publicAPI(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.hops = append(h.hops, r.URL.RequestURI())
	h.mu.Unlock()
	q := r.URL.Query()
	switch {
	case r.URL.Path != "/oauth2/auth":
		http.NotFound(w, r)
	case q.Has("login_verifier"):
		http.Redirect(w, r, h.loginURL+"/consent?consent_challenge=c1", http.StatusFound)
	case q.Has("consent_verifier"):
		http.Redirect(w, r, h.redirectURI+"?code=the-code&state=s1", http.StatusFound)
	default:
		http.Redirect(w, r, h.loginURL+"/login?login_challenge=l1", http.StatusFound)
	}
}

// TestSignInInChromium signs in through the login app's page in headless
// Chromium, which enforces the page's Content-Security-Policy: the form
// posts to the page's own origin, is answered with a 302 to the identity
// provider's origin, and the flow goes on from there to the consent step
// and the client's redirect URI, each on an origin of its own. Chromium
// applies form-action to every redirect of the form's navigation: with
// form-action 'self' alone (issue 41) the browser stays on the sign-in page,
// and with 'self' and the provider's origin it stays there too, blocked at
// the last redirect, the one to the client's redirect URI. The
// deployment test (deploy/e2e TestComposeAuth) signs in in Chromium too,
// against the real Hydra; this one needs no Docker.
func TestSignInInChromium(t *testing.T) {
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>callback</title><p id=done>code %s</p>", r.URL.Query().Get("code"))
	}))
	defer callback.Close()
	h := &fakeHydra{redirectURI: strings.Replace(callback.URL, "127.0.0.1", "localhost", 1) + "/callback"}
	h.admin = httptest.NewServer(http.HandlerFunc(h.adminAPI))
	defer h.admin.Close()
	h.public = httptest.NewServer(http.HandlerFunc(h.publicAPI))
	defer h.public.Close()
	app, err := demologin.New(demologin.Config{AdminURL: h.admin.URL, PublicURL: h.public.URL, Users: map[string]string{"alice": "alice-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	login := httptest.NewServer(app)
	defer login.Close()
	h.loginURL = login.URL

	ctx := chromiumtest.Start(t, nil)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(h.public.URL+"/oauth2/auth?client_id=agentura-cli"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
	); err != nil {
		t.Fatalf("open the sign-in page: %v", err)
	}
	if page, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.HasPrefix(page, login.URL+"/login?") {
		t.Fatalf("the provider sent the browser to %s (%v), not to the login page", page, err)
	}
	resp, err := http.Get(login.URL + "/login?login_challenge=l1")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "form-action") {
		t.Fatalf("the login page sends no form-action: %q", csp)
	}

	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "alice-pw"),
		chromedp.Click(chromedp.CSS(`button[value=accept]`)),
	); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	// The browser lands on the client's redirect URI, or stays on the
	// sign-in page when the policy blocks a redirect.
	wait, cancelWait := context.WithTimeout(ctx, 30*time.Second)
	defer cancelWait()
	err = chromedp.Do(wait, chromedp.WaitVisible(chromedp.CSS(`#done`)))
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		h.mu.Lock()
		hops := slices.Clone(h.hops)
		h.mu.Unlock()
		t.Fatalf("Sign in did not reach the client's redirect URI (policy %q): the browser is at %s; the provider saw %q", csp, loc, hops)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#done`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(loc, h.redirectURI+"?") || text != "code the-code" {
		t.Fatalf("landed on %s with %q, want %s with the code", loc, text, h.redirectURI)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	want := []string{"/oauth2/auth?client_id=agentura-cli", "/oauth2/auth?login_verifier=v1", "/oauth2/auth?consent_verifier=v2"}
	if !slices.Equal(h.hops, want) {
		t.Errorf("the provider saw %q, want %q", h.hops, want)
	}
}
