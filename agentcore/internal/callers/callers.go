// Package callers decides who calls an agent: the bearer check of
// AGENT_AUTH=jwt (a key of the operator's) and AGENT_AUTH=oauth (the agent
// as an OAuth 2.1 resource server, internal/oauthrs), the owner a request
// acts for, the scopes each endpoint and JSON-RPC method needs and the
// challenges that name them, the protected-resource metadata and what the
// A2A card says of it. Its settings are the Access section of
// agentcore.Config.
package callers

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/agentura/agentura/agentcore/internal/oauthrs"
	"github.com/agentura/agentura/agentcore/internal/urlfetch"
	"github.com/agentura/agentura/settings"
)

// Access holds the authentication settings, a section of agentcore.Config.
type Access struct {
	Auth            string   // AGENT_AUTH
	AuthJWTSecret   string   // AGENT_AUTH_JWT_SECRET
	AuthJWTKeyFile  string   // AGENT_AUTH_JWT_PUBLIC_KEY_FILE
	AuthJWTAudience []string // AGENT_AUTH_JWT_AUDIENCE: a caller token's aud must name one of these; empty: not checked
	AuthJWTIssuer   []string // AGENT_AUTH_JWT_ISSUER: a caller token's iss must be one of these; empty: not checked

	OAuthIssuer           string   // AGENT_OAUTH_ISSUER (AGENT_AUTH=oauth)
	OAuthAudience         []string // AGENT_OAUTH_AUDIENCE; empty: <PublicURL>/mcp and <PublicURL>
	OAuthIntrospectionURL string   // AGENT_OAUTH_INTROSPECTION_URL; empty: opaque tokens refused
	OAuthClientID         string   // AGENT_OAUTH_CLIENT_ID: the agent's own client, for introspection
	OAuthClientSecret     string   // AGENT_OAUTH_CLIENT_SECRET
}

// Settings declares the authentication settings, each bound to its field.
func (c *Access) Settings() settings.List {
	return settings.List{
		settings.String(&c.Auth, "AGENT_AUTH", "none", "`none`; `jwt`: callers of `/mcp`, `/a2a` and `/uploads` send "+
			"`Authorization: Bearer <JWT>` (401 without) checked with the key below; `oauth`: the agent is an OAuth 2.1 resource server "+
			"of AGENT_OAUTH_ISSUER as the MCP authorization specification says (docs/security.md); either way `sub` is the owner").
			OneOf("none", "jwt", "oauth"),
		settings.String(&c.AuthJWTSecret, "AGENT_AUTH_JWT_SECRET", "", "HS256 secret (≥ 32 bytes) for caller tokens").Secret().
			Row("HS256 secret (≥ 32 bytes), or a PEM public key: RSA (RS256), ECDSA P-256 (ES256) or Ed25519 (EdDSA)"),
		settings.String(&c.AuthJWTKeyFile, "AGENT_AUTH_JWT_PUBLIC_KEY_FILE", "",
			"PEM public key of caller tokens: RSA (RS256), ECDSA P-256 (ES256) or Ed25519 (EdDSA)").JoinRow(),
		settings.Strings(&c.AuthJWTAudience, "AGENT_AUTH_JWT_AUDIENCE", ",", "comma-separated: a caller token's `aud` must name one of these").
			Shown("empty: not checked").
			Row("comma-separated: a caller token's `aud` must name one of these, its `iss` be one of these. **Set both whenever " +
				"the identity provider (or the secret) serves more than this agent**, or a token issued for another service is accepted here"),
		settings.Strings(&c.AuthJWTIssuer, "AGENT_AUTH_JWT_ISSUER", ",", "comma-separated: a caller token's `iss` must be one of these").
			Shown("empty: not checked").JoinRow(),
		settings.String(&c.OAuthIssuer, "AGENT_OAUTH_ISSUER", "", "with `AGENT_AUTH=oauth`: the identity provider's issuer URL, exactly as "+
			"its tokens' `iss` says (`https://auth.example.com/realms/agents`); its RFC 8414 or OpenID Connect metadata names its keys (JWKS), "+
			"read through the SSRF guard: a private host must be listed in AGENT_FETCH_ALLOW_HOSTS or mapped by AGENT_PEER_URLS; "+
			"while it cannot be reached (5 s at the most a request), a token it must check is answered 503 with Retry-After, not 401"),
		settings.Strings(&c.OAuthAudience, "AGENT_OAUTH_AUDIENCE", ",", "comma-separated: an access token's `aud` must name one of these "+
			"(a provider that names its APIs otherwise, e.g. `api://agent`)").Shown("`<AGENT_PUBLIC_URL>/mcp,<AGENT_PUBLIC_URL>`"),
		settings.String(&c.OAuthIntrospectionURL, "AGENT_OAUTH_INTROSPECTION_URL", "", "RFC 7662 introspection endpoint that checks opaque "+
			"(non-JWT) access tokens, each answer kept 30 s").Shown("empty: opaque tokens refused"),
		settings.String(&c.OAuthClientID, "AGENT_OAUTH_CLIENT_ID", "", "the agent's own client at the provider, for introspection").
			Row("the agent's own client id and secret at the provider, sent (HTTP Basic) to AGENT_OAUTH_INTROSPECTION_URL"),
		settings.String(&c.OAuthClientSecret, "AGENT_OAUTH_CLIENT_SECRET", "", "the secret of AGENT_OAUTH_CLIENT_ID").Secret().JoinRow(),
	}
}

// Check checks the settings that depend on each other, after the
// declarations' own checks; it copies the slices first, so that what the
// caller handed in is never changed.
func (c *Access) Check() error {
	c.AuthJWTAudience = append([]string(nil), c.AuthJWTAudience...)
	c.AuthJWTIssuer = append([]string(nil), c.AuthJWTIssuer...)
	c.OAuthAudience = append([]string(nil), c.OAuthAudience...)
	var errs []error
	bad := func(name, value string, err error) {
		errs = append(errs, &settings.Error{Var: name, Value: value, Err: err})
	}
	if c.Auth == "jwt" {
		if c.AuthJWTSecret == "" && c.AuthJWTKeyFile == "" {
			bad("AGENT_AUTH", c.Auth, errors.New("jwt needs AGENT_AUTH_JWT_SECRET or AGENT_AUTH_JWT_PUBLIC_KEY_FILE"))
		}
		if c.AuthJWTSecret != "" && len(c.AuthJWTSecret) < 32 {
			bad("AGENT_AUTH_JWT_SECRET", "(hidden)", errors.New("must be at least 32 bytes"))
		}
	}
	if c.Auth == "oauth" {
		if c.OAuthIssuer == "" {
			bad("AGENT_AUTH", c.Auth, errors.New("oauth needs AGENT_OAUTH_ISSUER, the identity provider's issuer URL"))
		} else if err := oauthrs.HTTPSOrLoopback(c.OAuthIssuer); err != nil {
			bad("AGENT_OAUTH_ISSUER", c.OAuthIssuer, fmt.Errorf("%w; an issuer is an https URL (http only on loopback, for development)", err))
		}
		if err := oauthrs.HTTPSOrLoopback(c.OAuthIntrospectionURL); c.OAuthIntrospectionURL != "" && err != nil {
			bad("AGENT_OAUTH_INTROSPECTION_URL", c.OAuthIntrospectionURL, err)
		}
	}
	return errors.Join(errs...)
}

// Guard checks the callers of one agent.
type Guard struct {
	mode      string        // AGENT_AUTH
	publicURL string        // AGENT_PUBLIC_URL
	verifier  tokenVerifier // nil: AGENT_AUTH=none
	oauth     *oauthrs.Resource
}

// New makes the guard of an agent at publicURL; under AGENT_AUTH=oauth it
// reads the identity provider through fetch (which guards against SSRF).
func New(c Access, publicURL string, fetch *urlfetch.Fetcher, log *slog.Logger) (*Guard, error) {
	g := &Guard{mode: c.Auth, publicURL: publicURL}
	switch c.Auth {
	case "jwt":
		v, err := newCallerVerifier(c)
		if err != nil {
			return nil, err
		}
		g.verifier = v
	case "oauth":
		g.oauth = oauthrs.New(oauthrs.Options{Issuer: c.OAuthIssuer, PublicURL: publicURL, Audiences: c.OAuthAudience,
			IntrospectionURL: c.OAuthIntrospectionURL, ClientID: c.OAuthClientID, ClientSecret: c.OAuthClientSecret}, fetch, log)
		g.verifier = g.oauth
	}
	return g, nil
}

// Authenticated reports whether a bearer token names each caller
// (AGENT_AUTH jwt or oauth); without, every caller is AnonymousOwner.
func (g *Guard) Authenticated() bool { return g.verifier != nil }

// OAuth is the resource server of AGENT_AUTH=oauth; nil under another mode.
func (g *Guard) OAuth() *oauthrs.Resource { return g.oauth }

// Close stops what the guard runs in the background.
func (g *Guard) Close() {
	if g.oauth != nil {
		g.oauth.Close()
	}
}
