package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transferclient"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// SignInTimeout bounds how long a sign-in waits for the user to come back
// from the identity provider's page.
const SignInTimeout = 5 * time.Minute

// OAuthConfig configures SignIn: how a host signs in to an agent with
// AGENT_AUTH=oauth, the way the MCP authorization specification says.
type OAuthConfig struct {
	// ClientID is the host's client at the agent's identity provider, a
	// public client registered for the loopback redirect
	// http://127.0.0.1/callback (any port). Required: the provider is found
	// from the agent, the client is not.
	ClientID string
	// ClientSecret, for a confidential client; usually empty.
	ClientSecret string
	// Tokens keeps the tokens between runs (OpenTokenFile); nil keeps them
	// in memory only.
	Tokens *TokenFile
	// OpenURL shows the sign-in page to the user: the CLI prints it and
	// starts the desktop's browser. Required.
	OpenURL func(ctx context.Context, signInURL string) error
	// HTTPClient talks to the agent's metadata and the provider; nil means
	// http.DefaultClient.
	HTTPClient *http.Client
}

// OAuth signs a host in to one agent: on the agent's 401 it reads the
// protected-resource metadata (RFC 9728), discovers the identity provider
// (RFC 8414 or OpenID Connect), runs authorization code with PKCE (S256)
// through a loopback redirect the way desktop hosts do, asks for a token
// whose audience is the agent (RFC 8707 resource), and refreshes it. It is
// the go-sdk's own auth.AuthorizationCodeHandler with a loopback fetcher
// and a token file.
type OAuth struct {
	handler  *auth.AuthorizationCodeHandler
	cfg      OAuthConfig
	resource string // the agent's MCP endpoint, the key of its tokens
	redirect string // http://127.0.0.1:<port>/callback

	life context.Context // ended by Close: a pending sign-in stops
	end  context.CancelFunc
	mu   sync.Mutex
	// pending is the sign-in under way, nil when none is.
	pending *signInFlight
}

// signInFlight is one sign-in: the browser step and the token exchange.
type signInFlight struct {
	done chan struct{} // closed when it ended
	err  error         // why it failed; read once done is closed
}

// SignIn prepares the sign-in to the agent whose MCP endpoint is endpoint;
// nothing happens until the agent asks for a token. A token kept in
// cfg.Tokens for the endpoint is used, and refreshed, first.
func SignIn(endpoint string, cfg OAuthConfig) (*OAuth, error) {
	if cfg.ClientID == "" {
		return nil, errors.New("the agent signs callers in with OAuth: give the host's client id at its identity provider (--oauth-client-id, or $AGENTURA_OAUTH_CLIENT_ID)")
	}
	if cfg.OpenURL == nil {
		return nil, errors.New("client.SignIn: OpenURL is required")
	}
	cfg.HTTPClient = cmp.Or(cfg.HTTPClient, http.DefaultClient)
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	o := &OAuth{cfg: cfg, resource: endpoint, redirect: "http://127.0.0.1:" + port + "/callback"}
	o.life, o.end = context.WithCancel(context.Background())
	creds := &oauthex.ClientCredentials{ClientID: cfg.ClientID}
	if cfg.ClientSecret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
	}
	hc := &auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient:      creds,
		RedirectURL:              o.redirect,
		AuthorizationCodeFetcher: o.fetchCode,
		RequestRefreshToken:      true,
		Client:                   cfg.HTTPClient,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			return o.keep(ctx, c, tok)
		},
	}
	if kept, ok := cfg.Tokens.get(endpoint); ok && kept.ClientID == cfg.ClientID {
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, cfg.HTTPClient)
		hc.InitialTokenSource, _ = o.keep(ctx, &oauth2.Config{ClientID: kept.ClientID, ClientSecret: cfg.ClientSecret,
			Endpoint: oauth2.Endpoint{TokenURL: kept.TokenURL}}, kept.Token)
	}
	if o.handler, err = auth.NewAuthorizationCodeHandler(hc); err != nil {
		return nil, err
	}
	return o, nil
}

// Handler is what the MCP transport signs in with
// (mcp.StreamableClientTransport.OAuthHandler). Keep one OAuth per agent
// for all its connections: a sign-in under way is then shared, not begun
// again.
func (o *OAuth) Handler() auth.OAuthHandler { return (*sharedSignIn)(o) }

// Pending returns a channel closed when the sign-in under way ends, or nil
// when none is: whoever would connect again meanwhile waits for it instead
// (its browser page is open, and a new attempt would only ask again).
func (o *OAuth) Pending() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending == nil {
		return nil
	}
	return o.pending.done
}

// Close stops a sign-in under way (its loopback listener closes); o signs
// in no more.
func (o *OAuth) Close() { o.end() }

// sharedSignIn is the OAuth handler the transport gets: the go-sdk's, with
// the sign-in run apart from the request that met the 401.
type sharedSignIn OAuth

// TokenSource is the go-sdk handler's.
func (h *sharedSignIn) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return h.handler.TokenSource(ctx)
}

// Authorize signs in, once at a time. The sign-in runs under its own
// deadline (SignInTimeout for the browser step), not the request's: a
// connection attempt bounded to 20 s used to take the sign-in's listener
// with it while the user was still on the provider's page, and the next
// attempt showed a new URL. A caller that gives up first gets an error and
// leaves the sign-in running; a later Authorize meanwhile waits for that
// sign-in instead of beginning another, and succeeds with it.
func (h *sharedSignIn) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	o := (*OAuth)(h)
	f, err := o.begin(ctx, req, resp)
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if err != nil {
		return err
	}
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return fmt.Errorf("%w before the sign-in ended; it goes on, waiting up to %s for the browser", ctx.Err(), SignInTimeout)
	}
}

// begin returns the sign-in under way, or starts one for the refusal resp
// of req, run apart from them under its own deadline (Authorize).
func (o *OAuth) begin(ctx context.Context, req *http.Request, resp *http.Response) (*signInFlight, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending != nil {
		return o.pending, nil
	}
	if o.life.Err() != nil {
		return nil, errors.New("the sign-in was stopped: the host is closing")
	}
	f := &signInFlight{done: make(chan struct{})}
	o.pending = f
	// What the handler reads of the request and the answer, apart from
	// them: the transport may close the body once this caller returns.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SignInTimeout+time.Minute)
	stop := context.AfterFunc(o.life, cancel)
	r := req.Clone(sctx)
	a := &http.Response{Status: resp.Status, StatusCode: resp.StatusCode, Header: resp.Header.Clone(), Body: http.NoBody, Request: r}
	go func() {
		err := o.handler.Authorize(sctx, r, a)
		stop()
		cancel()
		o.mu.Lock()
		f.err, o.pending = err, nil
		o.mu.Unlock()
		close(f.done)
	}()
	return f, nil
}

// SignedIn reports whether o holds a token that works: one got by a
// sign-in or kept in the token file, refreshed if it expired.
func (o *OAuth) SignedIn(ctx context.Context) bool {
	ts, _ := o.handler.TokenSource(ctx)
	if ts == nil {
		return false
	}
	_, err := ts.Token()
	return err == nil
}

// SignInTo signs in to the resource server at resource (an A2A agent's
// origin, which has no MCP transport to meet a 401 with) as its 401 would:
// its protected-resource metadata (RFC 9728, at resource's
// /.well-known/oauth-protected-resource) names the identity provider and
// the resource the token is asked for (RFC 8707), with the scopes it
// lists. The sign-in runs apart, as Authorize's does, and a sign-in under
// way is shared, not begun again. SignInTo returns when it ended, with its
// error, or when ctx ends first (the sign-in goes on).
func (o *OAuth) SignInTo(ctx context.Context, resource string) error {
	req, err := http.NewRequest(http.MethodGet, resource, nil)
	if err != nil {
		return fmt.Errorf("sign in to %s: %w", resource, err)
	}
	resp := &http.Response{StatusCode: http.StatusUnauthorized, Status: "401 Unauthorized", Header: http.Header{}, Body: http.NoBody}
	resp.Header.Set("WWW-Authenticate", `Bearer resource_metadata="`+strings.TrimRight(resource, "/")+`/.well-known/oauth-protected-resource"`)
	return (*sharedSignIn)(o).Authorize(ctx, req, resp)
}

// HTTPClient returns a copy of hc (nil: a new client) that sends the current
// access token to origin only: uploads and downloads of the agent.
func (o *OAuth) HTTPClient(hc *http.Client, origin *url.URL) *http.Client {
	with := *cmp.Or(hc, &http.Client{})
	with.Transport = &oauthBearer{o: o, origin: origin, base: with.Transport}
	return &with
}

// oauthBearer puts the current token on requests to the agent's origin.
type oauthBearer struct {
	o      *OAuth
	origin *url.URL
	base   http.RoundTripper
}

func (b *oauthBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	token := ""
	if transfer.SameOrigin(b.origin, r.URL) {
		ts, _ := b.o.handler.TokenSource(r.Context())
		if ts != nil {
			if tok, err := ts.Token(); err == nil {
				token = tok.AccessToken
			}
		}
	}
	return (&transferclient.BearerTransport{Token: token, Origin: b.origin, Base: b.base}).RoundTrip(r)
}

// keep returns a token source for tok that saves each new token to the
// token file.
func (o *OAuth) keep(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	ks := &keptSource{o: o, clientID: c.ClientID, tokenURL: c.Endpoint.TokenURL, src: c.TokenSource(ctx, tok)}
	ks.mu.Lock()
	ks.save(tok)
	ks.mu.Unlock()
	return ks, nil
}

// keptSource saves the tokens its source hands out.
type keptSource struct {
	o                  *OAuth
	clientID, tokenURL string
	src                oauth2.TokenSource
	mu                 sync.Mutex
	last               string
}

// Token returns a token of the source and saves it. One at a time: two
// refreshes saved out of order would leave the file with a refresh token
// already used, which providers that rotate them take for a theft.
func (k *keptSource) Token() (*oauth2.Token, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	tok, err := k.src.Token()
	if err != nil {
		return nil, err
	}
	k.save(tok)
	return tok, nil
}

// save writes tok to the token file unless it is the one written last;
// k.mu is held.
func (k *keptSource) save(tok *oauth2.Token) {
	if tok.AccessToken == k.last {
		return
	}
	k.last = tok.AccessToken
	if err := k.o.cfg.Tokens.put(k.o.resource, keptToken{ClientID: k.clientID, TokenURL: k.tokenURL, Token: tok}); err != nil {
		// The token still works for this run; the next one signs in again.
		fmt.Fprintf(os.Stderr, "agentura: could not keep the token: %v\n", err)
	}
}

// fetchCode is the browser step: it shows the sign-in page through OpenURL
// and waits on the loopback redirect for the provider's answer.
func (o *OAuth) fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	u, _ := url.Parse(o.redirect)
	ln, err := net.Listen("tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("listen for the sign-in's answer on %s: %w", u.Host, err)
	}
	type answer struct {
		res *auth.AuthorizationResult
		err error
	}
	got := make(chan answer, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != u.Path {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		a := answer{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}
		msg := "Signed in. You may close this window and return to agentura."
		if e := q.Get("error"); e != "" {
			a = answer{err: fmt.Errorf("the identity provider refused the sign-in: %s: %s", e, q.Get("error_description"))}
			msg = "The sign-in failed: " + e + ". You may close this window."
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Connection", "close")
		io.WriteString(w, "<!doctype html><title>agentura</title><p>"+html.EscapeString(msg)+"</p>")
		if f, ok := w.(http.Flusher); ok {
			f.Flush() // the page reaches the browser before the listener closes
		}
		select {
		case got <- a:
		default:
		}
	})}
	go srv.Serve(ln)
	defer func() {
		// Shutdown lets the answer to the browser finish; Close would cut it.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	if err := o.cfg.OpenURL(ctx, args.URL); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, SignInTimeout)
	defer cancel()
	select {
	case a := <-got:
		return a.res, a.err
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer from the sign-in page within %s: %w", SignInTimeout, ctx.Err())
	}
}

func freeLoopbackPort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a loopback port for the sign-in's redirect: %w", err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port, nil
}

// TokenFile keeps a host's OAuth tokens, by agent, in a JSON file of its
// own (mode 0600, its folder 0700): access and refresh tokens, and where
// and as whom to refresh them. Safe for concurrent use by one process.
type TokenFile struct {
	path string
	mu   sync.Mutex
}

// keptToken is one agent's entry.
type keptToken struct {
	ClientID string        `json:"client_id"`
	TokenURL string        `json:"token_url"`
	Token    *oauth2.Token `json:"token"`
}

// DefaultTokenFile is where the CLI and the gateway keep tokens:
// <user config folder>/agentura/oauth-tokens.json.
func DefaultTokenFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "agentura", "oauth-tokens.json")
}

// OpenTokenFile returns the token file at path, which need not exist yet.
// An existing file others may read or write is refused (on unix: a mode
// other than 0600 or 0400), it holds credentials.
// One process gets one TokenFile per path, so that the sign-ins to several
// agents (the gateway's) take turns writing it.
func OpenTokenFile(path string) (*TokenFile, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err == nil {
		if err := private(abs, st); err != nil {
			return nil, err
		}
	}
	f, _ := tokenFiles.LoadOrStore(abs, &TokenFile{path: abs})
	return f.(*TokenFile), nil
}

// tokenFiles are the token files this process opened, by path.
var tokenFiles sync.Map

func (f *TokenFile) read() (map[string]keptToken, error) {
	all := map[string]keptToken{}
	b, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return all, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("token file %s is not what agentura writes (%v): remove it to sign in again", f.path, err)
	}
	return all, nil
}

func (f *TokenFile) get(resource string) (keptToken, bool) {
	if f == nil {
		return keptToken{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.read()
	if err != nil {
		return keptToken{}, false
	}
	k, ok := all[resource]
	return k, ok && k.Token != nil && k.TokenURL != ""
}

// put records t for resource, writing the file anew (0600) and renaming it
// into place, so a crash never leaves half a file.
func (f *TokenFile) put(resource string, t keptToken) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.read()
	if err != nil {
		all = map[string]keptToken{}
	}
	all[resource] = t
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".oauth-tokens-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err = tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(b)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.path)
}

// ShowSignIn returns an OAuthConfig.OpenURL for a terminal: it prints the
// sign-in URL to w and, unless $AGENTURA_NO_BROWSER is set, asks the
// desktop to open it (xdg-open, open); the URL printed is enough where no
// browser starts.
func ShowSignIn(w io.Writer) func(ctx context.Context, signInURL string) error {
	return func(ctx context.Context, signInURL string) error {
		fmt.Fprintf(w, "Sign in to the agent's identity provider in your browser:\n  %s\n(waiting up to %s)\n", signInURL, SignInTimeout)
		if os.Getenv("AGENTURA_NO_BROWSER") == "" {
			openBrowser(signInURL)
		}
		return nil
	}
}
