package gateway

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/client"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// signIn prepares the OAuth sign-in to the agent a with AGENT_AUTH=oauth
// (client.SignIn): it returns the handler of the agent's MCP transport and
// the HTTP client of its uploads and downloads, which carries the same
// token. One sign-in per agent for the gateway's life, made at its first
// connection: a sign-in under way outlives the attempt that began it, and
// the next attempt shares it (one URL shown, one callback listener). An
// agent without an OAuth client id (Agent.OAuthClientID, else
// Config.OAuthClientID) gets nil for both: its token, if any, is Token.
func (g *Gateway) signIn(a *agent, endpoint *url.URL) (auth.OAuthHandler, *http.Client, error) {
	ac := a.cfg
	id := cmp.Or(ac.OAuthClientID, g.cfg.OAuthClientID)
	if id == "" {
		return nil, nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.oauth != nil {
		return a.oauth.Handler(), a.httpClient, nil
	}
	tokens, err := client.OpenTokenFile(cmp.Or(g.cfg.TokenFile, client.DefaultTokenFile()))
	if err != nil {
		return nil, nil, err
	}
	show := g.cfg.OpenURL
	if show == nil {
		// stdout may carry the MCP protocol: the sign-in URL goes to stderr,
		// which a host shows in its log, and to the desktop's browser.
		show = client.ShowSignIn(os.Stderr)
	}
	o, err := client.SignIn(endpoint.String(), client.OAuthConfig{ClientID: id, Tokens: tokens, OpenURL: show})
	if err != nil {
		return nil, nil, err
	}
	base, _ := url.Parse(ac.BaseURL)
	if ac.BaseURL == "" {
		b, _ := client.BaseURLFromEndpoint(endpoint.String())
		base, _ = url.Parse(b)
	}
	a.oauth, a.httpClient = o, o.HTTPClient(nil, base)
	return o.Handler(), a.httpClient, nil
}

// signingIn returns a channel closed when the agent's sign-in under way
// ends, or nil when none is.
func (a *agent) signingIn() <-chan struct{} {
	a.mu.Lock()
	o := a.oauth
	a.mu.Unlock()
	if o == nil {
		return nil
	}
	return o.Pending()
}

// openURL is how the gateway shows a sign-in page (Config.OpenURL).
type openURL = func(ctx context.Context, signInURL string) error

// asksForSignIn reports whether an A2A agent's card requires a user's
// OAuth token: one of its security requirements names an OAuth 2.0 scheme
// with the authorization-code flow, or an OpenID Connect scheme (an
// agentura agent with AGENT_AUTH=oauth declares both).
func asksForSignIn(card *a2a.AgentCard) bool {
	for _, req := range card.Security {
		for name := range req {
			switch s := card.SecuritySchemes[name].(type) {
			case a2a.OAuth2SecurityScheme:
				if s.Flows.AuthorizationCode != nil {
					return true
				}
			case a2a.OpenIDConnectSecurityScheme:
				return true
			}
		}
	}
	return false
}

// a2aOrigin is the origin of the A2A agent p as the gateway reaches it:
// the resource it signs in to, and the only place its token goes.
func a2aOrigin(p *a2aPeer) (*url.URL, error) {
	u, err := url.Parse(p.url)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the A2A agent's URL %q is no http(s) URL", p.url)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// a2aSignIn is the OAuth sign-in of the A2A agent a, whose card asks for
// a user's token (asksForSignIn), made once as for an MCP agent (signIn);
// nil when the gateway has no OAuth client id for it.
func (g *Gateway) a2aSignIn(a *agent, p *a2aPeer) (*client.OAuth, *url.URL, error) {
	origin, err := a2aOrigin(p)
	if err != nil {
		return nil, nil, err
	}
	if _, _, err := g.signIn(a, origin); err != nil {
		return nil, nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	p.signsIn = true
	return a.oauth, origin, nil
}

// startSignIn begins the sign-in to the A2A agent a at origin in the
// background, unless o holds a token or one is under way: the sign-in URL
// is shown (stderr, the browser) and the agent's tools work once it ended.
// It reports whether the agent waits for a sign-in.
func (g *Gateway) startSignIn(ctx context.Context, a *agent, o *client.OAuth, origin *url.URL) bool {
	if o.Pending() != nil {
		return true
	}
	if o.SignedIn(ctx) {
		return false
	}
	g.log.Info("the agent waits for a sign-in in the browser; its tools work once it is done", "agent", a.what,
		"waiting up to", client.SignInTimeout)
	g.background(func() {
		if err := o.SignInTo(g.bg, origin.String()); err != nil && g.bg.Err() == nil {
			g.log.Warn("the sign-in to the agent failed; a call of its tools begins another", "agent", a.what, "err", err)
		}
	})
	return true
}

// a2aSignedIn returns the sign-in of the A2A agent a when its card asked
// for a user's token (nil otherwise, or without an OAuth client id), and
// the origin it is for.
func (g *Gateway) a2aSignedIn(a *agent, p *a2aPeer) (*client.OAuth, *url.URL, error) {
	a.mu.Lock()
	signsIn := p.signsIn
	a.mu.Unlock()
	if !signsIn {
		return nil, nil, nil
	}
	return g.a2aSignIn(a, p)
}
