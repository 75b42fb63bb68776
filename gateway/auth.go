package gateway

import (
	"context"
	"net/http"
	"net/url"
	"os"

	"github.com/agentura/agentura/client"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// signIn prepares the OAuth sign-in to an agent with AGENT_AUTH=oauth
// (client.SignIn): it returns the handler of the agent's MCP transport and
// the HTTP client of its uploads and downloads, which carries the same
// token. An agent without an OAuth client id (Agent.OAuthClientID, else
// Config.OAuthClientID) gets nil for both: its token, if any, is Token.
func (g *Gateway) signIn(ac Agent, endpoint *url.URL) (auth.OAuthHandler, *http.Client, error) {
	id := ac.OAuthClientID
	if id == "" {
		id = g.cfg.OAuthClientID
	}
	if id == "" {
		return nil, nil, nil
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
	return o.Handler(), o.HTTPClient(nil, base), nil
}

// openURL is how the gateway shows a sign-in page (Config.OpenURL).
type openURL = func(ctx context.Context, signInURL string) error
