// Package oauthrs is an agent as an OAuth 2.1 resource server
// (AGENT_AUTH=oauth): issuer discovery, its JWKS, JWT access tokens and
// introspection of opaque ones.
package oauthrs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentura/agentura/agentcore/internal/urlfetch"
	"github.com/agentura/agentura/internal/lib/issuermeta"
	"github.com/agentura/agentura/internal/lib/mcptrace"
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
	// issuerRetry is the least time between two reads of the issuer after
	// one that failed: meanwhile a token that needs a read (the first, or
	// one of a key not read yet) is answered 503 at once, with the
	// Retry-After of httpjson.WriteFailure (5 s), so that an issuer that is
	// down is asked once per issuerRetry however many requests come.
	issuerRetry = 5 * time.Second
	// issuerRecheck is how old the last read may be before /readyz reads
	// again (and how often the refresher tries again while reads fail),
	// so that /readyz says within about this long that the provider went
	// away, or came back.
	issuerRecheck = 30 * time.Second
	// tokenLeeway is the clock skew allowed on exp, nbf and iat.
	tokenLeeway = 30 * time.Second
	// issuerTimeout bounds one request to the issuer, and how long a
	// caller's request waits for a read of the issuer it needs: past it,
	// 503. A read (metadata and keys) may go on for twice as long, for the
	// requests after.
	issuerTimeout = 5 * time.Second
	// readyWait is how long the /readyz check waits for a read it started
	// before it answers from the state it has.
	readyWait = time.Second
)

// ErrIssuerUnavailable marks a token that could not be checked because the
// issuer's metadata, keys or introspection endpoint cannot be read: the
// caller is told to retry (503), not to sign in again (401). The error is
// a *fault.Fault (fault.IdentityProviderUnavailable) whose words name no
// URL or address.
var ErrIssuerUnavailable = errors.New("the identity provider cannot be reached")

// Resource is the agent as an OAuth 2.1 resource server
// (AGENT_AUTH=oauth), as the MCP authorization specification asks: it
// verifies access tokens of one issuer (AGENT_OAUTH_ISSUER) with the keys
// the issuer publishes (its JWKS, found through its RFC 8414 or OpenID
// Connect metadata, read again on an unknown key id and every
// jwksRefreshInterval), or by introspection (RFC 7662) for opaque tokens, and
// accepts only tokens whose audience names this agent. While the issuer
// cannot be read, the keys read before keep verifying, and a token that
// needs a read is answered 503 (ErrIssuerUnavailable), not 401.
type Resource struct {
	issuer     string
	resource   string   // the canonical URI of /mcp: <AGENT_PUBLIC_URL>/mcp
	origin     string   // AGENT_PUBLIC_URL, the resource of /a2a and /uploads
	audiences  []string // AGENT_OAUTH_AUDIENCE: a token's aud must name one
	client     *http.Client
	introspect *introspector // nil: opaque tokens are refused
	log        *slog.Logger
	ctx        context.Context // ends reads and the refresher; cancelled by Close
	stop       context.CancelFunc
	t          timings
	store      *jwkset.MemoryJWKSet // the key set read last
	keys       keyfunc.Keyfunc      // finds a token's key in store
	once       sync.Once            // starts the refresher

	mu        sync.Mutex
	meta      *issuermeta.Meta // nil until read
	usable    bool             // tokens can be checked: metadata and keys were read once
	reading   chan struct{}    // non-nil while a read runs, closed when it ends
	tried     time.Time        // when the last read ended; zero: none yet
	lastOK    time.Time        // when a read last succeeded
	lastErr   error            // the last read's error; nil when it succeeded
	emptyRead time.Time        // the last read a token's unknown key id waited for that did not find it
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
// AGENT_PEER_URLS, when it is private). Nothing is fetched yet: the
// issuer is read on first use (a token, or /readyz).
func New(cfg Options, fetch *urlfetch.Fetcher, log *slog.Logger) *Resource {
	o := &Resource{
		issuer:    cfg.Issuer,
		origin:    cfg.PublicURL,
		resource:  cfg.PublicURL + "/mcp",
		audiences: cfg.Audiences,
		client:    &http.Client{Transport: issuerTransport{fetch: fetch}, Timeout: issuerTimeout},
		log:       log,
		t: timings{timeout: issuerTimeout, retry: issuerRetry, recheck: issuerRecheck, refresh: jwksRefreshInterval,
			unknownKID: jwksUnknownKIDEvery, readyWait: readyWait},
		store: jwkset.NewMemoryStorage(),
	}
	if len(o.audiences) == 0 {
		o.audiences = []string{o.resource, o.origin}
	}
	o.ctx, o.stop = context.WithCancel(context.Background())
	o.keys, _ = keyfunc.New(keyfunc.Options{Ctx: o.ctx, Storage: o.store}) // fails only without a storage
	if cfg.IntrospectionURL != "" {
		o.introspect = &introspector{o: o, url: cfg.IntrospectionURL, clientID: cfg.ClientID, secret: cfg.ClientSecret}
		o.introspect.cache.Limit = 10000
	}
	return o
}

// Issuer is AGENT_OAUTH_ISSUER.
func (o *Resource) Issuer() string { return o.issuer }

// Origin is AGENT_PUBLIC_URL, the resource of /a2a and /uploads.
func (o *Resource) Origin() string { return o.origin }

// MCPResource is the canonical URI of /mcp: <AGENT_PUBLIC_URL>/mcp.
func (o *Resource) MCPResource() string { return o.resource }

// Close stops the reads of the issuer.
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
	n, err := b.ReadCloser.Read(p[:min(int64(len(p)), b.left)])
	b.left -= int64(n)
	return n, err
}

// HTTPSOrLoopback accepts an https URL, or an http one on a loopback host
// (for the configuration's checks; issuermeta holds the rule).
func HTTPSOrLoopback(raw string) error { return issuermeta.HTTPSOrLoopback(raw) }

// accessClaims are the claims of an access token (RFC 9068) the agent reads.
type accessClaims struct {
	jwt.RegisteredClaims
	Scope    scopeList `json:"scope,omitempty"`
	Scp      scopeList `json:"scp,omitempty"`
	ClientID string    `json:"client_id,omitempty"`
}

// parserOptions are the checks of a JWT access token beside its signature:
// a public-key algorithm, this issuer, an expiry, 30 s of clock skew.
func (o *Resource) parserOptions() []jwt.ParserOption {
	return []jwt.ParserOption{jwt.WithValidMethods(asymmetricAlgs), jwt.WithIssuer(o.issuer), jwt.WithExpirationRequired(), jwt.WithLeeway(tokenLeeway)}
}

// Verify checks a caller's bearer token (an auth.TokenVerifier): a JWT by
// signature with the issuer's keys, an opaque token by introspection. An
// error wraps auth.ErrInvalidToken (401), or ErrIssuerUnavailable (503)
// when the issuer could not be read for a token whose own claims would
// pass.
func (o *Resource) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	if strings.Count(token, ".") != 2 {
		if o.introspect == nil {
			return nil, fmt.Errorf("%w: the token is not a JWT, and this agent checks opaque tokens only when AGENT_OAUTH_INTROSPECTION_URL is set", auth.ErrInvalidToken)
		}
		return o.introspect.verify(ctx, token)
	}
	var c accessClaims
	var own error // keyFunc's refusal, or the issuer unavailable
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		key, err := o.keyFunc(ctx, t)
		if errors.Is(err, auth.ErrInvalidToken) || errors.Is(err, ErrIssuerUnavailable) {
			own = err
		}
		return key, err
	}, o.parserOptions()...)
	switch {
	case own != nil:
		return nil, own
	case err != nil:
		return nil, o.refusal(err, &c)
	}
	scopes := c.Scp
	if len(scopes) == 0 {
		scopes = c.Scope
	}
	return o.accept(c.Subject, c.Audience, scopes, c.ExpiresAt.Time, c.ClientID)
}

// refusal is the 401 of a JWT that failed parsing, its signature or its
// claims, saying why.
func (o *Resource) refusal(err error, c *accessClaims) error {
	switch {
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return fmt.Errorf("%w: the token's iss %q is not this agent's issuer %s (AGENT_OAUTH_ISSUER)", auth.ErrInvalidToken, c.Issuer, o.issuer)
	case errors.Is(err, keyfunc.ErrKeyfunc):
		return fmt.Errorf("%w: the token's signing key is not one issuer %s publishes (%v)", auth.ErrInvalidToken, o.issuer, err)
	}
	return fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
}

// keyFunc finds the key of a token in the issuer's key set, reading the
// issuer when the token needs it: on first use, and when it names a key id
// the set lacks (a key added by a rotation). Before anything else a token
// whose header has crit is refused (critical). Before any read, a token its
// own claims refuse (another issuer, expired, another audience) is refused
// (401): whatever its key, it would not pass, so it neither waits for the
// issuer nor makes it read. Only reads that come up empty count against
// the limit of jwksUnknownKIDEvery: a read that finds its key (a rotation,
// however soon after the last) costs nothing. One read runs at a time;
// the others wait for it. While reads fail, tokens that need one are
// answered 503 (unavailable) at once, but for the one that starts a read,
// at most every issuerRetry. A request waits for a read issuerTimeout at
// the most.
func (o *Resource) keyFunc(ctx context.Context, t *jwt.Token) (any, error) {
	if err := critical(t.Header); err != nil {
		return nil, err
	}
	kid, named := t.Header["kid"].(string)
	o.begin()
	for waited := false; ; waited = true {
		o.mu.Lock()
		usable, noKeys := o.usable, o.meta != nil && o.meta.JWKSURI == ""
		if usable && noKeys {
			o.mu.Unlock()
			return nil, fmt.Errorf("%w: the issuer publishes no keys (jwks_uri), so a JWT cannot be checked here", auth.ErrInvalidToken)
		}
		if usable && (!named || o.knownKID(ctx, kid)) {
			o.mu.Unlock()
			return o.keys.KeyfuncCtx(ctx)(t)
		}
		if c, ok := t.Claims.(*accessClaims); ok {
			if err := o.refusedByClaims(c); err != nil {
				o.mu.Unlock()
				return nil, err
			}
		}
		switch {
		case waited && o.lastErr != nil, !waited && o.lastErr != nil && (o.reading != nil || time.Since(o.tried) < o.t.retry):
			// The read waited for failed; or reads fail, and one runs or
			// ran less than issuerRetry ago: none waits for another's.
			err := o.lastErr
			o.mu.Unlock()
			return nil, unavailable(err)
		case waited, o.reading == nil && usable && time.Since(o.emptyRead) < o.t.unknownKID:
			// The set was read after the token came (or a read came up
			// empty just before) and lacks its key.
			if waited {
				o.emptyRead = time.Now()
			}
			o.mu.Unlock()
			return nil, fmt.Errorf("%w: the token's signing key %q is not one issuer %s publishes (its key set, read less than %s ago, lacks it)",
				auth.ErrInvalidToken, mcptrace.Truncate(kid, 80), o.issuer, o.t.unknownKID)
		}
		if err := o.awaitReadLocked(ctx); err != nil {
			return nil, err
		}
	}
}

// knownKID reports whether the key set read last holds kid: asked only of
// a usable issuer's named key, as every JWT is checked.
func (o *Resource) knownKID(ctx context.Context, kid string) bool {
	_, err := o.store.KeyRead(ctx, kid)
	return err == nil
}

// refusedByClaims is the 401 of a token whose own claims refuse it,
// whatever its signature: another issuer, expired (or not valid yet), an
// audience that does not name this agent; nil when they would pass. It is
// asked before a token makes the agent read (or wait for) the issuer.
func (o *Resource) refusedByClaims(c *accessClaims) error {
	if err := jwt.NewValidator(o.parserOptions()...).Validate(c); err != nil {
		return o.refusal(err, c)
	}
	if !o.forThisAgent(c.Audience) {
		return o.foreignAudience(c.Audience)
	}
	return nil
}

// critical refuses a token whose JWS header has a crit member (RFC 7515
// §4.1.11): it names header parameters a recipient must understand, and
// this agent understands no extension, so any crit (an empty list, or one
// naming a registered parameter, which RFC 7515 forbids, too) is refused.
// golang-jwt does not look at crit.
func critical(h map[string]any) error {
	crit, ok := h["crit"]
	if !ok {
		return nil
	}
	b, _ := json.Marshal(crit)
	return fmt.Errorf("%w: the token's JWS header marks %s as critical (crit), extensions this agent does not understand; RFC 7515 §4.1.11 has it refused",
		auth.ErrInvalidToken, mcptrace.Truncate(string(b), 80))
}

// accept turns a verified token's claims into the caller: its audience must
// name this agent, its sub becomes the owner.
func (o *Resource) accept(sub string, aud []string, scopes []string, exp time.Time, clientID string) (*auth.TokenInfo, error) {
	if !o.forThisAgent(aud) {
		return nil, o.foreignAudience(aud)
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

// forThisAgent reports whether a token's audience names this agent.
func (o *Resource) forThisAgent(aud []string) bool {
	return slices.ContainsFunc(o.audiences, func(a string) bool { return oauthex.MatchesResource(aud, a) })
}

// foreignAudience is the 401 of a token whose audience is another's.
func (o *Resource) foreignAudience(aud []string) error {
	return fmt.Errorf("%w: the token's audience %q does not name this agent (%s); ask the identity provider for a token with resource=%s (RFC 8707), or audience=%s",
		auth.ErrInvalidToken, aud, strings.Join(o.audiences, " or "), o.resource, o.resource)
}
