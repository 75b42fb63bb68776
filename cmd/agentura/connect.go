package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transferclient"
)

// conn is a connected MCP session and what it needs to be closed.
type conn struct {
	session *mcp.ClientSession
	base    string        // the agent's HTTP base, "" if unknown
	stderr  *tailBuffer   // a stdio agent's stderr
	close   func() error  // closes the session
	logger  *slog.Logger  // stderr logger at debug (with -v) or warn
	mcp     *mcp.Client   // the client, before Connect
	tr      mcp.Transport // the transport, before Connect
	// hc makes uploads and downloads: it carries the OAuth token under
	// --oauth-client-id; nil means the middleware's own client.
	hc *http.Client
}

// stderrLogger logs to stderr: everything with -v, warnings and errors
// without.
func stderrLogger(verbose bool, stderr io.Writer) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// endpointOf completes a bare base URL with /mcp.
func endpointOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an agent URL such as http://localhost:8001/mcp", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/mcp"
	}
	return u.String(), nil
}

// prepare builds the go-sdk client and transport for the flags; attach adds
// middleware before Connect.
func prepare(c *common, rawURL string, stderr io.Writer) (*conn, error) {
	cn := &conn{logger: stderrLogger(c.verbose, stderr)}
	cn.mcp = mcp.NewClient(&mcp.Implementation{Name: "agentura", Version: version}, &mcp.ClientOptions{Logger: cn.logger})
	client.DeclareFiles(cn.mcp) // every command speaks the draft's file transfer (SEP-2631 §2), tools included
	client.Trace(cn.mcp)        // with OTEL_* set, the agent's spans join this command's trace
	cn.base = c.baseURL
	if c.stdio {
		cmd := exec.Command(c.command[0], c.command[1:]...)
		cn.stderr = &tailBuffer{max: 16 << 10}
		cmd.Stderr = cn.stderr
		if c.verbose {
			cmd.Stderr = io.MultiWriter(stderr, cn.stderr)
		}
		// Content blocks the go-sdk cannot decode are rewritten (over
		// HTTP, client.WithTasks' client does it).
		cn.tr = client.ReadableTransport(client.LimitMessages(&mcp.CommandTransport{Command: cmd}, int64(c.maxMessage)))
		return cn, nil
	}
	endpoint, err := endpointOf(rawURL)
	if err != nil {
		return nil, err
	}
	if cn.base == "" {
		if cn.base, err = client.BaseURLFromEndpoint(endpoint); err != nil {
			return nil, err
		}
	}
	u, _ := url.Parse(endpoint)
	tr := &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		DisableStandaloneSSE: true, // one command, no server-initiated messages to wait for
		// The token goes to the endpoint's origin only; the middleware sees
		// the tasks an agent answers with (client.WithTasks).
		HTTPClient: client.WithTasks(transferclient.WithBearer(nil, c.token, u)),
	}
	if c.oauthClientID != "" {
		o, err := signIn(c, endpoint, stderr)
		if err != nil {
			return nil, err
		}
		tr.OAuthHandler = o.Handler()
		base, _ := url.Parse(cn.base)
		cn.hc = o.HTTPClient(nil, base)
	}
	cn.tr = client.LimitMessages(tr, int64(c.maxMessage))
	return cn, nil
}

// connect opens the session.
func (cn *conn) connect(ctx context.Context) error {
	s, err := cn.mcp.Connect(ctx, cn.tr, nil)
	if err != nil {
		if strings.Contains(err.Error(), http.StatusText(http.StatusUnauthorized)) {
			return fmt.Errorf("connect: %w: the agent wants a bearer token: give it with --token or $AGENTURA_TOKEN (AGENT_AUTH=jwt), "+
				"or sign in with --oauth-client-id (AGENT_AUTH=oauth: the agent's /.well-known/oauth-protected-resource names its identity provider)", err)
		}
		return cn.explain(fmt.Errorf("connect: %w", err))
	}
	cn.session = s
	cn.close = s.Close
	return nil
}

// explain adds the tail of a stdio agent's stderr to an error.
func (cn *conn) explain(err error) error {
	if cn.stderr != nil {
		if tail := strings.TrimSpace(cn.stderr.String()); tail != "" {
			return fmt.Errorf("%w\nthe agent's stderr ends with:\n%s", err, tail)
		}
	}
	return err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// signIn prepares the OAuth sign-in of --oauth-client-id to endpoint: the
// URL to sign in at is printed to stderr (and opened in the browser), the
// tokens kept in --token-file.
func signIn(c *common, endpoint string, stderr io.Writer) (*client.OAuth, error) {
	tokens, err := client.OpenTokenFile(c.tokenFile)
	if err != nil {
		return nil, err
	}
	return client.SignIn(endpoint, client.OAuthConfig{ClientID: c.oauthClientID, Tokens: tokens, OpenURL: client.ShowSignIn(stderr)})
}
