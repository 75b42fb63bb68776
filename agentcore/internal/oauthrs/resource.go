// Package oauthrs is an agent as an OAuth 2.1 resource server
// (AGENT_AUTH=oauth): issuer discovery, its JWKS, JWT access tokens and
// introspection of opaque ones.
package oauthrs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/time/rate"

	"github.com/agentura/agentura/agentcore/internal/urlfetch"
	"github.com/agentura/agentura/internal/lib/issuermeta"
)

// asymmetricAlgs are the JWS algorithms an issuer's access token may be
// signed with: public-key ones only, so a token signed with the public key
// as an HMAC secret (or with "none") never verifies.
var asymmetricAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

const (
	// jwksMaxBytes caps a JWKS (and any other answer of the issuer): a
	// dozen RSA keys take about 10 KiB.
	jwksMaxBytes = 512 << 10
	// jwksRefreshInterval is how often the JWKS is read again, so that a
	// key the issuer retired stops verifying without a restart.
	jwksRefreshInterval = 15 * time.Minute
	// jwksUnknownKIDEvery is how long after a read of the JWKS that did
	// not find the key id a token named (a made-up one) tokens naming a
	// key it lacks fail without another read, so that made-up key ids
	// cannot make the agent hammer the issuer.
	jwksUnknownKIDEvery = 10 * time.Second
	// discoveryRetry is the least time between two attempts at reading the
	// issuer's metadata while it cannot be read.
	discoveryRetry = 5 * time.Second
	// tokenLeeway is the clock skew allowed on exp, nbf and iat.
	tokenLeeway = 30 * time.Second
	// issuerTimeout bounds one request to the issuer.
	issuerTimeout = 15 * time.Second
)

// ErrIssuerUnavailable marks a token that could not be checked because the
// issuer's metadata or keys cannot be read: the caller is told to retry
// (503), not to sign in again (401).
var ErrIssuerUnavailable = errors.New("the identity provider cannot be reached")

// Resource is the agent as an OAuth 2.1 resource server
// (AGENT_AUTH=oauth), as the MCP authorization specification asks: it
// verifies access tokens of one issuer (AGENT_OAUTH_ISSUER) with the keys
// the issuer publishes (its JWKS, found through its RFC 8414 or OpenID
// Connect metadata, read again on an unknown key id and every
// jwksRefreshInterval), or by introspection (RFC 7662) for opaque tokens, and
// accepts only tokens whose audience names this agent.
type Resource struct {
	issuer     string
	resource   string   // the canonical URI of /mcp: <AGENT_PUBLIC_URL>/mcp
	origin     string   // AGENT_PUBLIC_URL, the resource of /a2a and /uploads
	audiences  []string // AGENT_OAUTH_AUDIENCE: a token's aud must name one
	client     *http.Client
	introspect *introspector // nil: opaque tokens are refused
	log        *slog.Logger
	ctx        context.Context // ends the JWKS refresh; cancelled by close
	stop       context.CancelFunc

	kidRead   chan struct{} // one read of the JWKS for a key id it lacks at a time
	emptyRead time.Time     // the last such read that did not find its key; kidRead held

	mu      sync.Mutex
	meta    *issuermeta.Meta
	keys    keyfunc.Keyfunc
	tried   time.Time // last failed discovery
	lastErr error
}

// Options are the settings of the resource server.
type Options struct {
	Issuer           string   // AGENT_OAUTH_ISSUER
	PublicURL        string   // AGENT_PUBLIC_URL
	Audiences        []string // AGENT_OAUTH_AUDIENCE; empty: <PublicURL>/mcp and PublicURL
	IntrospectionURL string   // AGENT_OAUTH_INTROSPECTION_URL; empty: opaque tokens are refused
	ClientID         string   // AGENT_OAUTH_CLIENT_ID, for introspection
	ClientSecret     string   // AGENT_OAUTH_CLIENT_SECRET, for introspection
}

// New prepares the resource server of cfg; fetch is the
// agent's SSRF-guarded fetcher, through which every request to the issuer
// goes (its host must be allowed in AGENT_FETCH_ALLOW_HOSTS, or mapped by
// AGENT_PEER_URLS, when it is private). Nothing is fetched yet.
func New(cfg Options, fetch *urlfetch.Fetcher, log *slog.Logger) *Resource {
	o := &Resource{
		issuer:    cfg.Issuer,
		origin:    cfg.PublicURL,
		resource:  cfg.PublicURL + "/mcp",
		audiences: cfg.Audiences,
		client:    &http.Client{Transport: issuerTransport{fetch: fetch}, Timeout: issuerTimeout},
		log:       log,
	}
	if len(o.audiences) == 0 {
		o.audiences = []string{o.resource, o.origin}
	}
	if cfg.IntrospectionURL != "" {
		o.introspect = &introspector{url: cfg.IntrospectionURL, clientID: cfg.ClientID, secret: cfg.ClientSecret,
			client: o.client, issuer: o.issuer}
		o.introspect.cache.Limit = 10000
	}
	o.kidRead = make(chan struct{}, 1)
	o.ctx, o.stop = context.WithCancel(context.Background())
	return o
}

// Issuer is AGENT_OAUTH_ISSUER.
func (o *Resource) Issuer() string { return o.issuer }

// Origin is AGENT_PUBLIC_URL, the resource of /a2a and /uploads.
func (o *Resource) Origin() string { return o.origin }

// MCPResource is the canonical URI of /mcp: <AGENT_PUBLIC_URL>/mcp.
func (o *Resource) MCPResource() string { return o.resource }

// Close stops the JWKS refresh.
func (o *Resource) Close() { o.stop() }

// issuerTransport sends the agent's requests to its issuer through the SSRF
// guard (and a peer's internal URL), and caps every answer at jwksMaxBytes.
type issuerTransport struct{ fetch *urlfetch.Fetcher }

func (t issuerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	client, raw := t.fetch.ClientFor(req.URL.String())
	if raw != req.URL.String() {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.URL, req.Host = u, ""
	}
	resp, err := client.Transport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > jwksMaxBytes {
		resp.Body.Close()
		return nil, fmt.Errorf("%s answered %d bytes, more than the %d an identity provider's metadata or key set may take", req.URL.Host, resp.ContentLength, jwksMaxBytes)
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: jwksMaxBytes, host: req.URL.Host}
	return resp, nil
}

// cappedBody fails a body that runs past its cap instead of truncating it.
type cappedBody struct {
	io.ReadCloser
	left int64
	host string
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.ReadCloser.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%s answered more than the %d bytes an identity provider's metadata or key set may take", b.host, jwksMaxBytes)
		}
		return b.ReadCloser.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// discover reads the issuer's metadata and prepares its key set. The
// metadata must name this very issuer (a document naming another is
// refused), and its endpoints be https (or loopback http): issuermeta.Read.
func (o *Resource) discover(ctx context.Context) (*issuermeta.Meta, keyfunc.Keyfunc, error) {
	meta, err := issuermeta.Read(ctx, o.issuer, o.client)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (AGENT_OAUTH_ISSUER)", err)
	}
	if meta.JWKSURI == "" {
		if o.introspect == nil {
			return nil, nil, fmt.Errorf("issuer %s publishes no jwks_uri; set AGENT_OAUTH_INTROSPECTION_URL to check its tokens by introspection", o.issuer)
		}
		return meta, nil, nil
	}
	strict := false
	keys, err := keyfunc.NewDefaultOverrideCtx(o.ctx, []string{meta.JWKSURI}, keyfunc.Override{
		Client:                    o.client,
		HTTPTimeout:               issuerTimeout,
		NoErrorReturnFirstHTTPReq: &strict,
		RefreshInterval:           jwksRefreshInterval,
		// keyFunc limits the reads for unknown key ids (emptyRead); the
		// library's limiter lets each through, and its wait bounds the read.
		RefreshUnknownKID: rate.NewLimiter(rate.Inf, 1),
		RateLimitWaitMax:  issuerTimeout,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) {
				o.log.Warn("could not read the identity provider's keys again; the ones read before stay in use", "jwks_uri", u, "err", err)
			}
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read the keys of issuer %s at %s: %w", o.issuer, meta.JWKSURI, err)
	}
	return meta, keys, nil
}

// HTTPSOrLoopback accepts an https URL, or an http one on a loopback host
// (for the configuration's checks; issuermeta holds the rule).
func HTTPSOrLoopback(raw string) error { return issuermeta.HTTPSOrLoopback(raw) }

// IssuerState returns the issuer's metadata and keys, discovering them on
// first use and, while that fails, again at most every discoveryRetry.
func (o *Resource) IssuerState(ctx context.Context) (*issuermeta.Meta, keyfunc.Keyfunc, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.meta != nil {
		return o.meta, o.keys, nil
	}
	if !o.tried.IsZero() && time.Since(o.tried) < discoveryRetry {
		return nil, nil, fmt.Errorf("%w: %v", ErrIssuerUnavailable, o.lastErr)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*issuerTimeout)
	defer cancel()
	meta, keys, err := o.discover(ctx)
	if err != nil {
		o.tried, o.lastErr = time.Now(), err
		o.log.Warn("cannot read the identity provider's metadata; tokens are refused with 503 until it can be read", "issuer", o.issuer, "err", err)
		return nil, nil, fmt.Errorf("%w: %v", ErrIssuerUnavailable, err)
	}
	o.meta, o.keys = meta, keys
	return meta, keys, nil
}

// Ready is the /readyz check: the issuer's metadata and keys were read.
func (o *Resource) Ready(ctx context.Context) error {
	_, _, err := o.IssuerState(ctx)
	return err
}

// accessClaims are the claims of an access token (RFC 9068) the agent reads.
type accessClaims struct {
	jwt.RegisteredClaims
	Scope    scopeList `json:"scope,omitempty"`
	Scp      scopeList `json:"scp,omitempty"`
	ClientID string    `json:"client_id,omitempty"`
}

// Verify checks a caller's bearer token (an auth.TokenVerifier): a JWT by
// signature with the issuer's keys, an opaque token by introspection.
func (o *Resource) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	if strings.Count(token, ".") != 2 {
		if o.introspect == nil {
			return nil, fmt.Errorf("%w: the token is not a JWT, and this agent checks opaque tokens only when AGENT_OAUTH_INTROSPECTION_URL is set", auth.ErrInvalidToken)
		}
		return o.introspect.verify(ctx, token, o.accept)
	}
	_, keys, err := o.IssuerState(ctx)
	if err != nil {
		return nil, err
	}
	if keys == nil {
		return nil, fmt.Errorf("%w: the issuer publishes no keys (jwks_uri), so a JWT cannot be checked here", auth.ErrInvalidToken)
	}
	var c accessClaims
	_, err = jwt.ParseWithClaims(token, &c, o.keyFunc(ctx, keys),
		jwt.WithValidMethods(asymmetricAlgs), jwt.WithIssuer(o.issuer), jwt.WithExpirationRequired(), jwt.WithLeeway(tokenLeeway))
	switch {
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return nil, fmt.Errorf("%w: the token's iss %q is not this agent's issuer %s (AGENT_OAUTH_ISSUER)", auth.ErrInvalidToken, c.Issuer, o.issuer)
	case errors.Is(err, keyfunc.ErrKeyfunc):
		return nil, fmt.Errorf("%w: the token's signing key is not one issuer %s publishes (%v)", auth.ErrInvalidToken, o.issuer, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	scopes := c.Scp
	if len(scopes) == 0 {
		scopes = c.Scope
	}
	return o.accept(c.Subject, c.Audience, scopes, c.ExpiresAt.Time, c.ClientID)
}

// keyFunc finds the key of a token in the issuer's key set. A key id the
// set lacks makes it read the set again (a key added by a rotation). Only
// reads that come up empty count against the limit: after one, tokens
// naming a key the set lacks fail at once for jwksUnknownKIDEvery, so that
// made-up key ids cannot make the agent hammer the issuer; a read that
// finds its key (a rotation, however soon after the last) costs nothing.
// One such read runs at a time; the others wait for it and look again.
func (o *Resource) keyFunc(ctx context.Context, keys keyfunc.Keyfunc) jwt.Keyfunc {
	kf := keys.KeyfuncCtx(ctx)
	return func(t *jwt.Token) (any, error) {
		kid, ok := t.Header["kid"].(string)
		if !ok || knownKID(ctx, keys, kid) {
			return kf(t)
		}
		select {
		case o.kidRead <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		defer func() { <-o.kidRead }()
		if knownKID(ctx, keys, kid) { // read by the request before
			return kf(t)
		}
		if time.Since(o.emptyRead) < jwksUnknownKIDEvery {
			return nil, fmt.Errorf("%w: key id %q is not in the issuer's key set, read again less than %s ago", keyfunc.ErrKeyfunc, cut(kid, 80), jwksUnknownKIDEvery)
		}
		key, err := kf(t) // reads the set again
		if !knownKID(ctx, keys, kid) {
			o.emptyRead = time.Now()
		}
		return key, err
	}
}

// knownKID reports whether the key set read last holds kid.
func knownKID(ctx context.Context, keys keyfunc.Keyfunc, kid string) bool {
	all, err := keys.Storage().KeyReadAll(ctx)
	if err != nil {
		return false
	}
	for _, k := range all {
		if k.Marshal().KID == kid {
			return true
		}
	}
	return false
}

// accept turns a verified token's claims into the caller: its audience must
// name this agent, its sub becomes the owner.
func (o *Resource) accept(sub string, aud []string, scopes []string, exp time.Time, clientID string) (*auth.TokenInfo, error) {
	ok := false
	for _, a := range o.audiences {
		ok = ok || oauthex.MatchesResource(aud, a)
	}
	if !ok {
		return nil, fmt.Errorf("%w: the token's audience %q does not name this agent (%s); ask the identity provider for a token with resource=%s (RFC 8707), or audience=%s",
			auth.ErrInvalidToken, aud, strings.Join(o.audiences, " or "), o.resource, o.resource)
	}
	if sub == "" {
		return nil, fmt.Errorf("%w: the token has no sub claim to name the caller", auth.ErrInvalidToken)
	}
	extra := map[string]any{}
	if clientID != "" {
		extra["client_id"] = clientID
	}
	return &auth.TokenInfo{UserID: sub, Scopes: scopes, Expiration: exp, Extra: extra}, nil
}

// cut shortens s to n bytes and marks the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
