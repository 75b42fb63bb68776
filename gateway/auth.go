package gateway

import (
	"context"
	"net/http"
	"net/url"
	"os"

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
	id := ac.OAuthClientID
	if id == "" {
		id = g.cfg.OAuthClientID
	}
	if id == "" {
		return nil, nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.oauth != nil {
		return a.oauth.Handler(), a.httpClient, nil
	}
	path := g.cfg.TokenFile
	if path == "" {
		path = client.DefaultTokenFile()
	}
	tokens, err := client.OpenTokenFile(path)
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
