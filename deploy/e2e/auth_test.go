//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentura/agentura/internal/testkit/hydratest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// authStack is the sign-in deployment: docker-compose.yml with
// docker-compose.auth.yml (make up-auth), certificates from a local CA.
type authStack struct {
	*deployment
	issuer string
	trust  *http.Transport // trusts the stack's CA
	caFile string
}

// startAuthStack brings the sign-in deployment up as docs/deployment.md
// shows it: its transcript of make up-auth (the CA and certificates made
// by make in a folder of this test's, AUTH_TLS) and the agentura CLI's
// sign-in, as alice.
func startAuthStack(t *testing.T) *authStack {
	t.Helper()
	tlsDir := filepath.Join(t.TempDir(), "auth-tls")
	caFile := filepath.Join(tlsDir, "ca.pem")
	hydraPort, loginPort := strconv.Itoa(envPort(t, "E2E_HYDRA_PORT")), strconv.Itoa(envPort(t, "E2E_LOGIN_PORT"))
	issuer := "https://localhost:" + hydraPort
	project := runProject("auth")
	d := startDeploymentWith(t, project, []string{"docker-compose.auth.yml"},
		map[string]string{"AUTH_TLS_DIR": tlsDir, "HYDRA_PORT": hydraPort, "LOGIN_PORT": loginPort},
		&makeUp{target: "up-auth", defaultProject: "agenturaauth",
			vars: []string{"AUTH_PROJECT=" + project, "AUTH_TLS=" + tlsDir},
			subst: [][2]string{{"build/auth-tls", tlsDir},
				{"localhost:4444", "localhost:" + hydraPort}, {"localhost:4446", "localhost:" + loginPort}},
			onLine: func(ctx context.Context, line string) error {
				if u := strings.TrimSpace(line); strings.HasPrefix(u, issuer+"/oauth2/auth?") {
					return chromiumSignIn(t, filepath.Join(tlsDir, "lb.pem"), "alice", u)
				}
				return nil
			}})
	tr, err := caTransport(caFile)
	must(t, err, "the deployment's CA")
	return &authStack{deployment: d, issuer: issuer, trust: tr, caFile: caFile}
}

// caTransport is an HTTP transport that trusts the CA of caFile alone.
func caTransport(caFile string) (*http.Transport, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no certificate", caFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	return tr, nil
}

// hydra runs the hydra CLI inside the provider's container against its
// admin API (not published outside the compose network).
func (s *authStack) hydra(t *testing.T, args ...string) string {
	t.Helper()
	full := append([]string{"exec", s.containerID(t, "hydra"), "hydra"}, args...)
	full = append(full, "-e", "https://127.0.0.1:4445", "--format", "json")
	out, err := procgroup.CombinedOutput(exec.Command("docker", full...))
	if err != nil {
		t.Fatalf("hydra %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// serviceToken makes a client-credentials client allowed audience and
// returns a token of it for that audience.
func (s *authStack) serviceToken(t *testing.T, id, audience string) string {
	t.Helper()
	s.hydra(t, "create", "oauth2-client", "--id", id, "--secret", "e2e-secret-"+id, "--grant-type", "client_credentials",
		"--scope", "tools:call,files:read,files:write", "--audience", audience, "--token-endpoint-auth-method", "client_secret_basic",
		"--access-token-strategy", "jwt")
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"tools:call files:read files:write"}, "audience": {audience}}
	req, _ := http.NewRequest(http.MethodPost, s.issuer+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, "e2e-secret-"+id)
	resp, err := (&http.Client{Transport: s.trust, Timeout: 30 * time.Second}).Do(req)
	must(t, err, "token of %s", id)
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	b, _ := io.ReadAll(resp.Body)
	if json.Unmarshal(b, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("token of %s: %s %s", id, resp.Status, b)
	}
	return tok.AccessToken
}

// host is the go-sdk's own OAuth client for the pre-registered client
// mcp-host, signing user in through the demo login page.
func (s *authStack) host(t *testing.T, ctx context.Context, endpoint, user string) *mcp.ClientSession {
	t.Helper()
	browser := hydratest.Browser{User: user, Password: hydratest.Users[user], Transport: s.trust}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: "mcp-host"},
		RedirectURL:         "http://127.0.0.1:47011/callback",
		Client:              &http.Client{Transport: s.trust},
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, err := browser.SignIn(ctx, args.URL)
			if err != nil {
				return nil, err
			}
			code, state, iss, err := hydratest.Code(u)
			return &auth.AuthorizationResult{Code: code, State: state, Iss: iss}, err
		},
	})
	must(t, err, "OAuth handler")
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-host", Version: "1"}, nil)
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, OAuthHandler: h}, nil)
	must(t, err, "connect to %s as %s through OAuth", endpoint, user)
	t.Cleanup(func() { sess.Close() })
	return sess
}

func pngDataURI(t *testing.T) string {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range 8 {
		img.Set(i, i, color.Black)
	}
	var b bytes.Buffer
	must(t, png.Encode(&b, img), "encode a PNG")
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestComposeAuth runs `make up-auth`'s deployment: the agents as OAuth
// resource servers of Hydra (TLS, the demo login page), brought up by the
// doc's transcript, whose agentura CLI call signs alice in through the login
// page in headless Chromium, its Content-Security-Policy enforced. An independent
// client (the go-sdk's own OAuth client) starts from a bare 401 and, given
// only the composer's URL, signs alice in and calls a tool with a file;
// bob does not see her files; a
// token for another resource gets 401 naming the audience; the provider's
// signing keys are replaced and the agents take new tokens and refuse the
// old ones, without a restart.
func TestComposeAuth(t *testing.T) {
	s := startAuthStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	endpoint := s.composerURL + "/mcp"

	resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	must(t, err, "bare request")
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+s.composerURL+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("bare request: %s %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}

	alice := s.host(t, ctx, endpoint, "alice")
	res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "compose_document", Arguments: map[string]any{
		"markdown": "# Alice's report\n\n![dot](dot.png)", "format": "html", "filename": "alice-report.html",
		"embeds": []any{map[string]any{"name": "dot.png", "content": pngDataURI(t)}}}})
	if err != nil || res.IsError {
		t.Fatalf("alice's tools/call with a file: %v %+v", err, res)
	}
	bob := s.host(t, ctx, endpoint, "bob")
	lb, err := bob.ListResources(ctx, nil)
	must(t, err, "bob's resources")
	for _, r := range lb.Resources {
		if strings.Contains(r.Name, "alice") {
			t.Errorf("bob sees alice's %s", r.URI)
		}
	}
	la, err := alice.ListResources(ctx, nil)
	must(t, err, "alice's resources")
	if len(la.Resources) == 0 {
		t.Errorf("alice does not see her own file")
	}

	list := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	send := func(tok string) (int, string, string) {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(list))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		must(t, err, "POST /mcp")
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("WWW-Authenticate")
	}

	t.Run("a token for another resource gets 401 naming the audience", func(t *testing.T) {
		tok := s.serviceToken(t, "e2e-other", "http://localhost:9/mcp")
		code, body, ch := send(tok)
		if code != http.StatusUnauthorized || !strings.Contains(body, "audience") || !strings.Contains(ch, `error="invalid_token"`) {
			t.Errorf("%d %s %q", code, body, ch)
		}
	})

	t.Run("the provider's keys are replaced: new tokens taken, old refused, no restart", func(t *testing.T) {
		old := s.serviceToken(t, "e2e-rotate", s.composerURL)
		if code, body, _ := send(old); code != http.StatusOK {
			t.Fatalf("before: %d %s", code, body)
		}
		s.hydra(t, "delete", "jwk", "hydra.jwt.access-token") // the next token is signed by a new key
		form := url.Values{"grant_type": {"client_credentials"}, "scope": {"tools:call"}, "audience": {s.composerURL}}
		req, _ := http.NewRequest(http.MethodPost, s.issuer+"/oauth2/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("e2e-rotate", "e2e-secret-e2e-rotate")
		resp, err := (&http.Client{Transport: s.trust}).Do(req)
		must(t, err, "new token")
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		json.NewDecoder(resp.Body).Decode(&tok)
		resp.Body.Close()
		if code, body, _ := send(tok.AccessToken); code != http.StatusOK {
			t.Fatalf("a token of the new key: %d %s", code, body)
		}
		if code, body, _ := send(old); code != http.StatusUnauthorized {
			t.Fatalf("a token of the retired key: %d %s", code, body)
		}
	})
}
