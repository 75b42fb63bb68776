//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/audits"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/agentura/agentura/internal/testkit/chromiumtest"
	"github.com/agentura/agentura/internal/testkit/hydratest"
)

// signInStep bounds each step of a sign-in in Chromium: opening the login
// page, and the way from the submitted form to the client's redirect URI.
const signInStep = 60 * time.Second

// cspWorld is the isolated world the securitypolicyviolation listener runs
// in, out of the pages' own scripts' way, and the binding it reports through.
const cspWorld, cspBinding = "agentura-csp", "agenturaCSPViolation"

// cspListener reports each securitypolicyviolation event of a document, in
// every frame, before its own scripts run.
const cspListener = `document.addEventListener("securitypolicyviolation", (e) => ` + cspBinding + `(JSON.stringify({
	directive: e.effectiveDirective, blocked: e.blockedURI, document: e.documentURI, policy: e.originalPolicy})), true);`

// chromium is headless Chromium for a sign-in, which enforces each page's
// Content-Security-Policy, as a user's browser does, and records every
// violation it reports: in the console (the "Refused to …" lines), as a
// DevTools issue, and as the securitypolicyviolation event of the document.
type chromium struct {
	ctx context.Context
	// shots is where a failed step's screenshot goes; empty means a new
	// folder under the system's temporary folder, kept after the test.
	shots string

	mu         sync.Mutex
	violations []string
}

// startChromium starts Chromium until the test ends. certFile, when not
// empty, is a PEM certificate (the first of the file) that Chromium trusts
// for the servers presenting it, and no other: its public key is the one
// of --ignore-certificate-errors-spki-list (Chromium has no flag for a CA;
// certificate errors stay errors for every other key).
func startChromium(t *testing.T, certFile string) *chromium {
	t.Helper()
	var flags []chromedp.ExecAllocatorOption
	if certFile != "" {
		flags = append(flags, chromedp.Flag("ignore-certificate-errors-spki-list", spkiHash(t, certFile)))
	}
	c := &chromium{}
	c.ctx = chromiumtest.Start(t, flags, chromedp.WithListener(c.record))
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, audits.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable DevTools issues: %v", err)
	}
	if _, err := chromedp.Call(ctx, runtime.AddBinding, runtime.AddBindingParams{Name: cspBinding, ExecutionContextName: cspWorld}); err != nil {
		t.Fatalf("add the CSP binding: %v", err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspListener, WorldName: cspWorld}); err != nil {
		t.Fatalf("add the CSP listener: %v", err)
	}
	return c
}

// spkiHash is the base64 SHA-256 of the public key (SubjectPublicKeyInfo)
// of the first certificate in the PEM file, as Chromium's
// --ignore-certificate-errors-spki-list takes it.
func spkiHash(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	must(t, err, "read the server certificate")
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			t.Fatalf("%s holds no certificate", file)
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(blk.Bytes)
		must(t, err, "parse the certificate of %s", file)
		sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
		return base64.StdEncoding.EncodeToString(sum[:])
	}
}

// record is the tab's event listener (it runs on chromedp's read loop:
// it only appends).
func (c *chromium) record(ev any) {
	var v string
	switch e := ev.(type) {
	case *log.EventEntryAdded:
		if e.Entry != nil && strings.Contains(e.Entry.Text, "Content Security Policy") {
			v = "console: " + e.Entry.Text
		}
	case *audits.EventIssueAdded:
		if e.Issue != nil && e.Issue.Code == audits.InspectorIssueCodeContentSecurityPolicyIssue && e.Issue.Details != nil {
			if d := e.Issue.Details.ContentSecurityPolicyIssueDetails; d != nil {
				v = fmt.Sprintf("DevTools issue: %s blocked %s (%s)", d.ViolatedDirective, d.BlockedURL, d.ContentSecurityPolicyViolationType)
			}
		}
	case *runtime.EventBindingCalled:
		if e.Name == cspBinding {
			v = "securitypolicyviolation: " + e.Payload
		}
	}
	if v != "" {
		c.mu.Lock()
		c.violations = append(c.violations, v)
		c.mu.Unlock()
	}
}

// Violations returns the CSP violations Chromium reported so far.
func (c *chromium) Violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.violations)
}

// signIn opens authURL, an OAuth authorization URL, in the tab, signs user
// in at the login form it leads to (the demo login page's fields), accepts
// a consent page should one ask, and follows the flow, all in Chromium,
// until the tab shows the page of the redirect URI authURL names. It
// returns that page's URL and text. It fails, with the page's URL and text,
// a screenshot and the violations, when Chromium reports a CSP violation
// or a step does not end within signInStep.
func (c *chromium) signIn(authURL, user, password string) (landed, text string, err error) {
	au, err := url.Parse(authURL)
	if err != nil {
		return "", "", err
	}
	redirect := au.Query().Get("redirect_uri")
	if redirect == "" {
		return "", "", fmt.Errorf("the authorization URL names no redirect_uri: %s", authURL)
	}
	step, cancel := context.WithTimeout(c.ctx, signInStep)
	err = chromedp.Do(step,
		chromedp.Navigate(authURL),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), user),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), password),
		chromedp.Click(chromedp.CSS(`button[value=accept]`)),
	)
	cancel()
	if err != nil {
		return "", "", c.stalled("open the login page and submit it", err)
	}
	type state struct {
		URL, Text string
		Loaded    bool // the document is complete: its text is all there
		Consent   bool // a page asking for consent, with its accept button
	}
	deadline := time.Now().Add(signInStep)
	consented := false
	for {
		if v := c.Violations(); len(v) > 0 {
			return "", "", c.stalled("sign in", errors.New("Chromium reported a Content-Security-Policy violation"))
		}
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		s, err := chromedp.Run(ctx, chromedp.Evaluate[state](`({URL: location.href, Text: document.body ? document.body.innerText : "",
			Loaded: document.readyState === "complete",
			Consent: /\/consent$/.test(location.pathname) && !!document.querySelector("form button[value=accept]")})`))
		cancel()
		switch {
		case err != nil: // between two documents: ask again
		case !s.Loaded: // the tab's URL changes before the page is read in
		case strings.HasPrefix(s.URL, redirect+"?"):
			return s.URL, s.Text, nil
		case s.Consent && !consented:
			ctx, cancel := context.WithTimeout(c.ctx, signInStep)
			err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form button[value=accept]`)))
			cancel()
			if err != nil {
				return "", "", c.stalled("accept the consent page", err)
			}
			consented = true
			deadline = time.Now().Add(signInStep)
		}
		if time.Now().After(deadline) {
			return "", "", c.stalled("reach the redirect URI "+redirect, fmt.Errorf("not there after %s", signInStep))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// chromiumSignIn is the browser of the agentura CLI's sign-in: it signs
// user in, in headless Chromium trusting the certificate of certFile (the
// provider's and the login page's), at authURL, the address the CLI printed
// (AGENTURA_NO_BROWSER), and fails unless the tab ends on the CLI's own
// page, served by its loopback listener (the redirect URI of authURL), with
// no Content-Security-Policy violation on the way.
func chromiumSignIn(t *testing.T, certFile, user, authURL string) error {
	t.Helper()
	b := startChromium(t, certFile)
	landed, text, err := b.signIn(authURL, user, hydratest.Users[user])
	if err != nil {
		return fmt.Errorf("%s's sign-in for the CLI: %w", user, err)
	}
	if !strings.HasPrefix(landed, "http://127.0.0.1:") || !strings.Contains(landed, "/callback?code=") ||
		!strings.Contains(text, "Signed in. You may close this window") {
		return fmt.Errorf("the browser ended on %s showing %q; want the CLI's callback page with a code", landed, text)
	}
	if v := b.Violations(); len(v) > 0 {
		return fmt.Errorf("Chromium reported Content-Security-Policy violations: %q", v)
	}
	return nil
}

// stalled is the error of a sign-in step that failed: where the tab is,
// what it shows, the CSP violations, and a screenshot (in c.shots, else in
// a folder of its own that outlives the test, whose temporary folder goes
// with it).
func (c *chromium) stalled(what string, cause error) error {
	ctx, cancel := context.WithTimeout(c.ctx, 15*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	shot := "none"
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err != nil {
		shot = "none (" + err.Error() + ")"
	} else {
		dir, err := c.shots, error(nil)
		if dir == "" {
			dir, err = os.MkdirTemp("", "agentura-e2e-signin-")
		}
		shot = filepath.Join(dir, "page.png")
		if err == nil {
			err = os.WriteFile(shot, png, 0o644)
		}
		if err != nil {
			shot = "none (" + err.Error() + ")"
		}
	}
	var violations []string
	for _, v := range c.Violations() {
		violations = append(violations, fmt.Sprintf("%.600s", v))
	}
	return fmt.Errorf("%s in Chromium: %w\nthe tab is at %.300s, showing %.600q\nCSP violations: %q\nscreenshot: %s",
		what, cause, loc, text, violations, shot)
}

// TestChromiumSignInSeesCSPViolations checks the Chromium sign-in of the
// deployment tests against a stand-in provider and login page: it reaches
// the redirect URI when the page's form-action allows the way there, and
// fails naming the violation when the policy blocks the form's last
// redirect (the provider's answer to the client, on another origin), as
// the demo login page's form-action 'self' once did to a real user (issue
// 41). No Docker: it needs Chromium only.
func TestChromiumSignInSeesCSPViolations(t *testing.T) {
	client := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>client</title><p>Signed in with code %s.</p>", r.URL.Query().Get("code"))
	}))
	defer client.Close()
	redirect := client.URL + "/callback"
	var policy atomic.Value // the login page's CSP
	login := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/oauth2/auth":
			http.Redirect(w, r, "/login", http.StatusFound)
		case r.URL.Path == "/login" && r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", policy.Load().(string))
			fmt.Fprint(w, `<!doctype html><title>Sign in</title><form method="post" action="login">
<input name="username"><input name="password" type="password"><button type="submit" name="action" value="accept">Sign in</button></form>`)
		case r.URL.Path == "/login" && r.PostFormValue("username") == "alice" && r.PostFormValue("password") == "pw":
			http.Redirect(w, r, redirect+"?code=c1", http.StatusFound)
		default:
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
		}
	}))
	defer login.Close()
	authURL := login.URL + "/oauth2/auth?response_type=code&redirect_uri=" + url.QueryEscape(redirect)

	policy.Store("default-src 'none'; form-action 'self' " + client.URL)
	b := startChromium(t, "")
	landed, text, err := b.signIn(authURL, "alice", "pw")
	if err != nil || landed != redirect+"?code=c1" || !strings.Contains(text, "Signed in with code c1.") {
		t.Fatalf("allowed by the policy: landed on %s with %q: %v", landed, text, err)
	}

	policy.Store("default-src 'none'; form-action 'self'")
	b = startChromium(t, "")
	b.shots = t.TempDir()
	landed, _, err = b.signIn(authURL, "alice", "pw")
	if err == nil {
		t.Fatalf("form-action 'self' let the browser reach %s; want the redirect to the client blocked", landed)
	}
	if v := b.Violations(); !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, "form-action") }) {
		t.Fatalf("the blocked sign-in reported no form-action violation (%q): %v", v, err)
	}
	t.Logf("the blocked sign-in fails with: %v", err)
}

// TestChromiumTrustsOnlyTheGivenCertificate checks how the deployment
// tests' Chromium trusts the stack's TLS: a server presenting the
// certificate of deploy/scale-tls.sh opens when that certificate is the
// one given, and is refused when another one is (no blanket
// --ignore-certificate-errors). No Docker: it needs Chromium and openssl.
func TestChromiumTrustsOnlyTheGivenCertificate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	run(t, nil, filepath.Join(repoRoot(t), "deploy", "scale-tls.sh"), dir)
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "lb.pem"), filepath.Join(dir, "lb.pem"))
	must(t, err, "load the certificate of scale-tls.sh")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>ok</title><p>trusted</p>")
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // the refused handshakes are expected
	srv.StartTLS()
	defer srv.Close()
	page := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/"

	o := httptest.NewTLSServer(http.NotFoundHandler()) // its certificate, httptest's own, is also for localhost
	o.Close()
	other := filepath.Join(t.TempDir(), "other.pem")
	must(t, os.WriteFile(other, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: o.Certificate().Raw}), 0o600), "write the other certificate")

	open := func(certFile string) error {
		b := startChromium(t, certFile)
		ctx, cancel := context.WithTimeout(b.ctx, signInStep)
		defer cancel()
		return chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("p")))
	}
	if err := open(filepath.Join(dir, "lb.pem")); err != nil {
		t.Fatalf("Chromium trusting the server's certificate did not open %s: %v", page, err)
	}
	if err := open(other); err == nil || !strings.Contains(err.Error(), "CERT") {
		t.Fatalf("Chromium trusting another certificate opened %s (or failed otherwise): %v", page, err)
	} else {
		t.Logf("refused as it should be: %v", err)
	}
}
