package a2acall

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/transferclient"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// ClientCredentials are a calling agent's own client at the identity
// provider of the agents it calls (those with AGENT_AUTH=oauth): a
// confidential client allowed the client_credentials grant and the called
// agents' URLs as audiences. Its client id is the owner of the calls'
// files there.
type ClientCredentials struct {
	ClientID, ClientSecret string
	// Scopes to ask for; nil means every scope the agent's card lists.
	Scopes []string
}

// tokenSources keeps one token source per token endpoint and resource, so
// that calls reuse a token until it expires.
type tokenSources struct {
	mu sync.Mutex
	m  map[string]oauth2.TokenSource
}

// withClientCredentials returns hc with a token of c.Credentials for the
// agent at base when its card declares an OAuth 2.0 client-credentials
// flow: the token endpoint from the card, the audience the agent's
// protected-resource metadata names (RFC 9728), sent as resource (RFC
// 8707) and audience (providers such as Hydra and Auth0 read only that).
func (c *Client) withClientCredentials(ctx context.Context, hc *http.Client, base *url.URL, card *a2a.AgentCard) (*http.Client, error) {
	var flow *a2a.ClientCredentialsOAuthFlow
	for _, s := range card.SecuritySchemes {
		if o, ok := s.(a2a.OAuth2SecurityScheme); ok && o.Flows.ClientCredentials != nil {
			flow = o.Flows.ClientCredentials
			break
		}
	}
	if flow == nil {
		return hc, nil // the agent takes no OAuth tokens: the credentials are not sent
	}
	resource := strings.TrimRight(base.String(), "/")
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, resource+"/.well-known/oauth-protected-resource", resource, hc)
	if err != nil {
		return nil, fmt.Errorf("read the protected-resource metadata of %s: %w", resource, err)
	}
	scopes := c.Credentials.Scopes
	if scopes == nil {
		for s := range flow.Scopes {
			scopes = append(scopes, s)
		}
		slices.Sort(scopes)
	}
	key := flow.TokenURL + " " + prm.Resource + " " + strings.Join(scopes, " ")
	c.tokens.mu.Lock()
	ts, ok := c.tokens.m[key]
	if !ok {
		cc := &clientcredentials.Config{ClientID: c.Credentials.ClientID, ClientSecret: c.Credentials.ClientSecret, TokenURL: flow.TokenURL,
			Scopes: scopes, EndpointParams: url.Values{"resource": {prm.Resource}, "audience": {prm.Resource}}}
		tctx := context.Background() // the source outlives this call
		if c.HTTPClient != nil {
			tctx = context.WithValue(tctx, oauth2.HTTPClient, c.HTTPClient)
		}
		ts = cc.TokenSource(tctx)
		if c.tokens.m == nil {
			c.tokens.m = map[string]oauth2.TokenSource{}
		}
		c.tokens.m[key] = ts
	}
	c.tokens.mu.Unlock()
	tok, err := ts.Token()
	if err != nil {
		return nil, fmt.Errorf("get a token for %s from %s as %s: %w", prm.Resource, flow.TokenURL, c.Credentials.ClientID, err)
	}
	return transferclient.WithBearer(c.HTTPClient, tok.AccessToken, base), nil
}
