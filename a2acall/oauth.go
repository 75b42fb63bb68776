package a2acall

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/internal/lib/issuermeta"
	"github.com/agentura/agentura/transferclient"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// ClientCredentials are a calling agent's own client at the identity
// provider of the agents it calls (those with AGENT_AUTH=oauth): a
// confidential client allowed the client_credentials grant and the called
// agents' URLs as audiences. Its client id is the owner of the calls'
// files there. It keeps the tokens it gets: give one (the same pointer) to
// the Clients of many calls, and they reuse a token until it expires. Do
// not copy one after its first use.
//
// The secret goes only to the token endpoint of Issuer, read from the
// issuer's own metadata, never to one an agent names: a call is refused
// when the agent's protected-resource metadata does not list Issuer among
// its authorization servers, or its card names another token endpoint.
type ClientCredentials struct {
	// Issuer is the identity provider the client is registered at, exactly
	// as its metadata's issuer says (https://idp.example.com/realms/agents).
	// Required.
	Issuer string
	// ClientID and ClientSecret are the client's at Issuer.
	ClientID, ClientSecret string
	// Scopes to ask for; nil means every scope the agent's card lists.
	Scopes []string

	tokens tokenSources // what they got, shared by the Clients given them
}

// tokenSources keeps the issuers' metadata (read again after metaTTL)
// and one token per issuer, resource and scopes, reused until shortly
// before it expires.
type tokenSources struct {
	mu     sync.Mutex
	meta   map[string]keptMeta // by issuer
	tokens map[tokenKey]*oauth2.Token
}

// keptMeta is an issuer's metadata and when it was read.
type keptMeta struct {
	*issuermeta.Meta
	read time.Time
}

// tokenKey is what a token is good for.
type tokenKey struct{ issuer, resource, scopes string }

const (
	// metaTTL is how long an issuer's metadata is used before it is read
	// again (an issuer may move its token endpoint).
	metaTTL = time.Hour
	// untimedTokenLifetime is how long a token is used whose answer gave
	// no expires_in.
	untimedTokenLifetime = 5 * time.Minute
	// maxKeptTokens bounds the tokens kept per ClientCredentials (one per
	// agent and scopes called); past it the expired ones go, then all.
	maxKeptTokens = 256
)

// withClientCredentials returns hc with a token of c.Credentials for the
// agent at base when its card declares an OAuth 2.0 client-credentials
// flow: from the token endpoint of c.Credentials.Issuer (its metadata, RFC
// 8414 or OpenID Connect Discovery), for the audience the agent's
// protected-resource metadata names (RFC 9728), sent as resource (RFC
// 8707) and audience (providers such as Hydra and Auth0 read only that).
// The agent must name that issuer in its protected-resource metadata and,
// on its card, no other token endpoint; otherwise nothing is sent.
func (c *Client) withClientCredentials(ctx context.Context, hc *http.Client, base *url.URL, card *a2a.AgentCard) (*http.Client, error) {
	cred := c.Credentials
	if cred.Issuer == "" {
		return nil, fmt.Errorf("a2acall: ClientCredentials.Issuer is empty; set it to the issuer URL of the identity provider client %q is registered at, so that its secret goes to that provider's token endpoint only", cred.ClientID)
	}
	flow := clientCredentialsFlow(card)
	if flow == nil {
		return hc, nil // the agent takes no OAuth tokens: the credentials are not sent
	}
	resource := strings.TrimRight(base.String(), "/")
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, resource+"/.well-known/oauth-protected-resource", resource, hc)
	if err != nil {
		return nil, fmt.Errorf("read the protected-resource metadata of %s: %w", resource, err)
	}
	if !slices.ContainsFunc(prm.AuthorizationServers, func(s string) bool { return issuermeta.SameIssuer(s, cred.Issuer) }) {
		return nil, fmt.Errorf("agent %s takes tokens of %q (authorization_servers of its protected-resource metadata), not of issuer %s where client %q is registered; the client's secret is not sent",
			resource, prm.AuthorizationServers, cred.Issuer, cred.ClientID)
	}
	meta, err := c.issuerMeta(ctx, cred)
	if err != nil {
		return nil, err
	}
	if flow.TokenURL != meta.TokenEndpoint {
		return nil, fmt.Errorf("agent %s's card names token endpoint %s, but issuer %s's is %s (%s); the client's secret goes to its issuer's token endpoint only, so the call is refused",
			resource, flow.TokenURL, cred.Issuer, meta.TokenEndpoint, meta.URL)
	}
	scopes := cred.Scopes
	if scopes == nil {
		scopes = slices.Sorted(maps.Keys(flow.Scopes))
	}
	key := tokenKey{issuer: cred.Issuer, resource: prm.Resource, scopes: strings.Join(scopes, " ")}
	cred.tokens.mu.Lock()
	tok := cred.tokens.tokens[key]
	cred.tokens.mu.Unlock()
	if !tok.Valid() {
		cc := &clientcredentials.Config{ClientID: cred.ClientID, ClientSecret: cred.ClientSecret, TokenURL: meta.TokenEndpoint,
			Scopes: scopes, EndpointParams: url.Values{"resource": {prm.Resource}, "audience": {prm.Resource}}}
		tctx := ctx // the call's deadline bounds the request for its token
		if c.HTTPClient != nil {
			tctx = context.WithValue(ctx, oauth2.HTTPClient, c.HTTPClient)
		}
		if tok, err = cc.Token(tctx); err != nil {
			return nil, fmt.Errorf("get a token for %s from %s as %s: %w", prm.Resource, meta.TokenEndpoint, cred.ClientID, err)
		}
		if tok.Expiry.IsZero() {
			tok.Expiry = time.Now().Add(untimedTokenLifetime)
		}
		cred.tokens.keep(key, tok)
	}
	return transferclient.WithBearer(c.HTTPClient, tok.AccessToken, base), nil
}

// clientCredentialsFlow returns the OAuth 2.0 client-credentials flow the
// card declares (an agent with AGENT_AUTH=oauth), or nil.
func clientCredentialsFlow(card *a2a.AgentCard) *a2a.ClientCredentialsOAuthFlow {
	for _, s := range card.SecuritySchemes {
		if o, ok := s.(a2a.OAuth2SecurityScheme); ok && o.Flows.ClientCredentials != nil {
			return o.Flows.ClientCredentials
		}
	}
	return nil
}

// ErrNoCredentials is a call refused before it is sent: the agent signs its
// callers in with OAuth (its card declares a client-credentials flow) and
// the Client has neither Credentials nor a Token nor its own HTTPClient.
var ErrNoCredentials = errors.New("no credentials for an agent that signs its callers in with OAuth")

// keep keeps tok for key, making room past maxKeptTokens.
func (ts *tokenSources) keep(key tokenKey, tok *oauth2.Token) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.tokens == nil {
		ts.tokens = map[tokenKey]*oauth2.Token{}
	}
	if len(ts.tokens) >= maxKeptTokens {
		maps.DeleteFunc(ts.tokens, func(_ tokenKey, t *oauth2.Token) bool { return !t.Valid() })
		if len(ts.tokens) >= maxKeptTokens {
			clear(ts.tokens)
		}
	}
	ts.tokens[key] = tok
}

// issuerMeta returns the metadata of cred's issuer, read on first use and
// again once metaTTL passed.
func (c *Client) issuerMeta(ctx context.Context, cred *ClientCredentials) (*issuermeta.Meta, error) {
	cred.tokens.mu.Lock()
	kept, ok := cred.tokens.meta[cred.Issuer]
	cred.tokens.mu.Unlock()
	if ok && time.Since(kept.read) < metaTTL {
		return kept.Meta, nil
	}
	meta, err := issuermeta.Read(ctx, cred.Issuer, c.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("ClientCredentials.Issuer: %w", err)
	}
	cred.tokens.mu.Lock()
	if cred.tokens.meta == nil {
		cred.tokens.meta = map[string]keptMeta{}
	}
	cred.tokens.meta[cred.Issuer] = keptMeta{Meta: meta, read: time.Now()}
	cred.tokens.mu.Unlock()
	return meta, nil
}
