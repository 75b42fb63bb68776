package agentcore_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/a2acall"
	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/internal/testkit/hydratest"
	"github.com/agentura/agentura/transferclient"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// allScopes is what a host of the agent asks for.
const allScopes = "tools:call files:read files:write"

// hostHandler is the go-sdk's own OAuth client (authorization code + PKCE)
// for a pre-registered public client, whose browser step signs user in.
func hostHandler(t *testing.T, clientID, user string) *auth.AuthorizationCodeHandler {
	t.Helper()
	return hostHandlerFiltering(t, clientID, user, nil)
}

// hostHandlerFiltering is hostHandler whose host narrows the scopes it asks
// for with filter.
func hostHandlerFiltering(t *testing.T, clientID, user string, filter func([]string) []string) *auth.AuthorizationCodeHandler {
	t.Helper()
	browser := hydratest.Browser{User: user, Password: hydratest.Users[user]}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		ScopeFilter:         filter,
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: clientID},
		RedirectURL:         "http://127.0.0.1:" + freePort(t) + "/callback",
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, err := browser.SignIn(ctx, args.URL)
			if err != nil {
				return nil, err
			}
			code, state, iss, err := hydratest.Code(u)
			return &auth.AuthorizationResult{Code: code, State: state, Iss: iss}, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// connect opens an MCP session with the go-sdk's client, given only the
// agent's URL and the OAuth handler.
func connect(t *testing.T, ctx context.Context, base string, h auth.OAuthHandler) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test-host", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", OAuthHandler: h}, nil)
	if err != nil {
		t.Fatalf("connect to %s/mcp through OAuth: %v", base, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func dataURI(name, text string) map[string]any {
	return map[string]any{"name": name, "content": "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte(text))}
}

// post sends a JSON-RPC body to base+path with token (none if "").
func post(t *testing.T, base, path, token, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// challenge parses the response's WWW-Authenticate Bearer parameters.
func challenge(t *testing.T, resp *http.Response) map[string]string {
	t.Helper()
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil || len(cs) == 0 || cs[0].Scheme != "bearer" {
		t.Fatalf("%s: no Bearer challenge (%v): %q", resp.Status, err, resp.Header.Values("WWW-Authenticate"))
	}
	return cs[0].Params
}

// TestOAuthWithHydra runs the agent as the resource server of a real
// identity provider (Ory Hydra) and reaches it the way a remote MCP host
// does: from a bare 401 to a tools/call with a file, given only its URL.
func TestOAuthWithHydra(t *testing.T) {
	p := hydratest.Start(t)
	base := hydratest.Agent(t, p)
	p.PublicClient(t, "gosdk-host", allScopes, base)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("bare request: 401 naming the metadata", func(t *testing.T) {
		resp, body := post(t, base, "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s %s", resp.Status, body)
		}
		ch := challenge(t, resp)
		if ch["resource_metadata"] != base+"/.well-known/oauth-protected-resource/mcp" || ch["scope"] != allScopes {
			t.Errorf("challenge %v", ch)
		}
		for _, path := range []string{"/uploads", "/uploads/tus/", "/a2a"} {
			resp, body := post(t, base, path, "", `{}`)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: %s %s", path, resp.Status, body)
				continue
			}
			if ch := challenge(t, resp); ch["resource_metadata"] != base+"/.well-known/oauth-protected-resource" {
				t.Errorf("%s: challenge %v", path, ch)
			}
		}
	})

	t.Run("protected-resource metadata", func(t *testing.T) {
		for path, resource := range map[string]string{"/.well-known/oauth-protected-resource/mcp": base + "/mcp", "/.well-known/oauth-protected-resource": base} {
			prm, err := oauthex.GetProtectedResourceMetadata(ctx, base+path, resource, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(prm.AuthorizationServers, []string{p.Issuer}) || !slices.Equal(prm.ScopesSupported, strings.Fields(allScopes)) {
				t.Errorf("%s: %+v", path, prm)
			}
		}
	})

	t.Run("go-sdk client signs in and calls a tool with a file", func(t *testing.T) {
		s := connect(t, ctx, base, hostHandler(t, "gosdk-host", "alice"))
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "archive_files", Arguments: map[string]any{
			"sources": []any{dataURI("hello.txt", "hello from alice")}, "name": "alice-bundle"}})
		if err != nil || res.IsError {
			t.Fatalf("tools/call: %v %+v", err, res)
		}
		list, err := s.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range list.Resources {
			found = found || strings.Contains(r.Name, "alice-bundle")
		}
		if !found {
			t.Errorf("alice's own output is not among her resources: %+v", list.Resources)
		}
	})

	t.Run("the go-sdk client steps up on 403 insufficient_scope", func(t *testing.T) {
		rounds := 0
		s := connect(t, ctx, base, hostHandlerFiltering(t, "gosdk-host", "alice", func(scopes []string) []string {
			rounds++
			if rounds == 1 {
				return []string{"files:read"} // a host that first asks for less
			}
			return scopes
		}))
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "inspect_file", Arguments: map[string]any{"source": dataURI("step.txt", "step up")}})
		if err != nil || res.IsError {
			t.Fatalf("tools/call after the step-up: %v %+v", err, res)
		}
		if rounds != 2 {
			t.Errorf("%d sign-ins, want 2 (files:read, then tools:call on the 403)", rounds)
		}
	})

	t.Run("two signed-in users see only their own files", func(t *testing.T) {
		alice := connect(t, ctx, base, hostHandler(t, "gosdk-host", "alice"))
		bob := connect(t, ctx, base, hostHandler(t, "gosdk-host", "bob"))
		res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "archive_files", Arguments: map[string]any{
			"sources": []any{dataURI("secret.txt", "alice only")}, "name": "alice-private"}})
		if err != nil || res.IsError {
			t.Fatalf("tools/call: %v %+v", err, res)
		}
		var aliceURI string
		la, _ := alice.ListResources(ctx, nil)
		for _, r := range la.Resources {
			if strings.Contains(r.Name, "alice-private") {
				aliceURI = r.URI
			}
		}
		if aliceURI == "" {
			t.Fatalf("alice does not see her file: %+v", la.Resources)
		}
		lb, err := bob.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range lb.Resources {
			if strings.Contains(r.Name, "alice") {
				t.Errorf("bob sees alice's file %s", r.URI)
			}
		}
		if _, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: aliceURI}); err == nil {
			t.Errorf("bob read alice's file %s", aliceURI)
		}
	})

	t.Run("two users see only their own files and tasks", func(t *testing.T) {
		// Two service clients: Hydra makes a client-credentials token's sub
		// its client id, so these are two callers.
		aliceSecret := p.ServiceClient(t, "svc-alice", allScopes, base)
		aliceTok := p.ClientCredentialsToken(t, "svc-alice", aliceSecret, allScopes, base+"/mcp")
		bobTok := p.ClientCredentialsToken(t, "svc-bob", p.ServiceClient(t, "svc-bob", allScopes, base), allScopes, base+"/mcp")
		alice, bob := bearerSession(t, ctx, base, aliceTok), bearerSession(t, ctx, base, bobTok)

		// alice: a file by tools/call, and an A2A task (with a file of its own).
		res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "archive_files", Arguments: map[string]any{
			"sources": []any{dataURI("ledger.txt", "svc-alice only")}, "name": "svc-alice-ledger"}})
		if err != nil || res.IsError {
			t.Fatalf("alice's tools/call: %v %+v", err, res)
		}
		fileID := ""
		for _, c := range res.Content {
			if l, ok := c.(*mcp.ResourceLink); ok && strings.Contains(l.Name, "svc-alice-ledger") {
				fileID = fileIDOf(t, l.URI)
			}
		}
		if fileID == "" {
			t.Fatalf("alice's result links no svc-alice-ledger file: %+v", res.Content)
		}
		in := filepath.Join(t.TempDir(), "task.txt")
		os.WriteFile(in, []byte("svc-alice's task input"), 0o644)
		task, err := (&a2acall.Client{Token: aliceTok, Dir: t.TempDir()}).CallSkill(ctx, base, "archive_files", map[string]any{"name": "svc-alice-task"}, in)
		if err != nil || task.TaskID == "" {
			t.Fatalf("alice's A2A task: %v %+v", err, task)
		}
		getTask := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + task.TaskID + `"}}`
		if resp, body := post(t, base, "/a2a", aliceTok, getTask); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"result"`) {
			t.Fatalf("alice's tasks/get of her own task: %s %s", resp.Status, body)
		}

		// bob sees none of it, and cannot delete it.
		lb, err := bob.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range lb.Resources {
			if strings.Contains(r.Name, "svc-alice") {
				t.Errorf("bob's resources/list shows alice's file %s", r.URI)
			}
		}
		if resp, body := post(t, base, "/a2a", bobTok, getTask); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"error"`) || !strings.Contains(strings.ToLower(body), "not found") {
			t.Errorf("bob's tasks/get of alice's task: %s %s", resp.Status, body)
		}
		if code, body := deleteFile(t, base, fileID, bobTok); code != http.StatusNotFound && code != http.StatusForbidden {
			t.Errorf("bob's DELETE of alice's file by id: %d %s", code, body)
		}
		// Deleting is writing: alice's token without files:write may not.
		readOnly := p.ClientCredentialsToken(t, "svc-alice", aliceSecret, "tools:call files:read", base+"/mcp")
		if code, body := deleteFile(t, base, fileID, readOnly); code != http.StatusForbidden {
			t.Errorf("alice's DELETE with a token lacking files:write: %d %s, want 403", code, body)
		}
		// alice deletes her own file by its id, with her bearer alone.
		if code, body := deleteFile(t, base, fileID, aliceTok); code != http.StatusNoContent {
			t.Errorf("alice's DELETE of her own file by id: %d %s", code, body)
		}
		if code, _ := deleteFile(t, base, fileID, aliceTok); code != http.StatusNotFound {
			t.Errorf("a second DELETE of the deleted file: %d, want 404", code)
		}
	})

	t.Run("a token for another resource gets 401 naming the audience", func(t *testing.T) {
		other := "http://127.0.0.1:1/mcp"
		secret := p.ServiceClient(t, "svc-other", allScopes, other)
		tok := p.ClientCredentialsToken(t, "svc-other", secret, allScopes, other)
		resp, body := post(t, base, "/mcp", tok, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "audience") {
			t.Fatalf("%s %s", resp.Status, body)
		}
		if ch := challenge(t, resp); ch["error"] != "invalid_token" || !strings.Contains(ch["error_description"], "audience") {
			t.Errorf("challenge %v", ch)
		}
	})

	t.Run("a token without tools:call gets 403 insufficient_scope", func(t *testing.T) {
		secret := p.ServiceClient(t, "svc-reader", "files:read", base)
		tok := p.ClientCredentialsToken(t, "svc-reader", secret, "files:read", base+"/mcp")
		resp, body := post(t, base, "/mcp", tok, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"inspect_file","arguments":{}}}`)
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("%s %s", resp.Status, body)
		}
		if ch := challenge(t, resp); ch["error"] != "insufficient_scope" || ch["scope"] != "tools:call" || ch["resource_metadata"] == "" {
			t.Errorf("challenge %v", ch)
		}
		resp, body = post(t, base, "/uploads", tok, "x")
		if resp.StatusCode != http.StatusForbidden || challenge(t, resp)["scope"] != "files:write" {
			t.Errorf("/uploads without files:write: %s %s", resp.Status, body)
		}
	})

	t.Run("key rotation: new tokens accepted, the retired key's refused, no restart", func(t *testing.T) {
		secret := p.ServiceClient(t, "svc-rotate", allScopes, base)
		list := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
		old := p.ClientCredentialsToken(t, "svc-rotate", secret, allScopes, base+"/mcp")
		if resp, body := post(t, base, "/mcp", old, list); resp.StatusCode != http.StatusOK {
			t.Fatalf("before the rotation: %s %s", resp.Status, body)
		}
		// Two rotations in a row, as when the provider makes its first key
		// on the first token request and then rotates: each first token of
		// a new key makes a read of the key set that finds it, and such a
		// read does not hold the next one back.
		for round := 1; round <= 2; round++ {
			kid := p.RotateKey(t)
			fresh := p.ClientCredentialsToken(t, "svc-rotate", secret, allScopes, base+"/mcp")
			if got := tokenKid(t, fresh); got != kid {
				t.Fatalf("rotation %d: the new token is signed with %q, not the new key %q", round, got, kid)
			}
			if resp, body := post(t, base, "/mcp", fresh, list); resp.StatusCode != http.StatusOK {
				t.Fatalf("rotation %d: a token of the new key: %s %s", round, resp.Status, body)
			}
		}
		// A made-up key id comes up empty: the next ones fail without a read.
		if resp, body := post(t, base, "/mcp", withKid(t, old, "made-up-key"), list); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a token naming a made-up key: %s %s", resp.Status, body)
		}
		resp, body := post(t, base, "/mcp", old, list)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a token of the retired key: %s %s", resp.Status, body)
		}
	})

	t.Run("an agent calls it over A2A with client credentials", func(t *testing.T) {
		secret := p.ServiceClient(t, "peer-agent", allScopes, base)
		in := filepath.Join(t.TempDir(), "peer.txt")
		os.WriteFile(in, []byte("from a peer agent"), 0o644)
		c := &a2acall.Client{Credentials: &a2acall.ClientCredentials{Issuer: p.Issuer, ClientID: "peer-agent", ClientSecret: secret}, Dir: t.TempDir()}
		res, err := c.CallSkill(ctx, base, "archive_files", map[string]any{"name": "peer"}, in)
		if err != nil {
			t.Fatalf("A2A call with client credentials: %v", err)
		}
		if len(res.Files) == 0 {
			t.Errorf("no file back: %+v", res)
		}
		if _, err := (&a2acall.Client{}).CallSkill(ctx, base, "archive_files", nil, in); !errors.Is(err, a2acall.ErrNoCredentials) {
			t.Errorf("without credentials: %v, want a2acall.ErrNoCredentials", err)
		}
		if _, err := (&a2acall.Client{Token: "not-a-token"}).CallSkill(ctx, base, "archive_files", nil, in); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("with a bogus token: %v, want a 401", err)
		}
	})

	t.Run("opaque tokens by introspection", func(t *testing.T) {
		admin, _ := url.Parse(p.AdminURL)
		introspecting := hydratest.Agent(t, p, func(c *agentcore.Config) {
			c.OAuthIntrospectionURL = p.AdminURL + "/admin/oauth2/introspect"
			c.FetchAllowHosts = append(c.FetchAllowHosts, admin.Host)
		})
		p.CreateClient(t, hydratest.Client{ID: "svc-opaque", Secret: "opaque-secret", GrantTypes: []string{"client_credentials"},
			Scope: allScopes, Audience: []string{introspecting}, AuthMethod: "client_secret_basic", Strategy: "opaque"})
		tok := p.ClientCredentialsToken(t, "svc-opaque", "opaque-secret", allScopes, introspecting+"/mcp")
		if strings.Count(tok, ".") == 2 {
			t.Fatalf("the token is a JWT, not opaque: %.40s", tok)
		}
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
		if resp, body := post(t, introspecting, "/mcp", tok, init); resp.StatusCode != http.StatusOK {
			t.Fatalf("an active opaque token: %s %s", resp.Status, body)
		}
		if resp, body := post(t, base, "/mcp", tok, init); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not a JWT") {
			t.Errorf("an agent without introspection: %s %s", resp.Status, body)
		}
		if resp, body := post(t, introspecting, "/mcp", "made-up-opaque-token", init); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not active") {
			t.Errorf("an unknown opaque token: %s %s", resp.Status, body)
		}
	})

	t.Run("the agent card declares the provider's flows", func(t *testing.T) {
		resp, err := http.Get(base + "/.well-known/agent-card.json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var card struct {
			SecuritySchemes map[string]struct {
				Type  string `json:"type"`
				Flows struct {
					ClientCredentials struct {
						TokenURL string `json:"tokenUrl"`
					} `json:"clientCredentials"`
				} `json:"flows"`
				OpenIDConnectURL string `json:"openIdConnectUrl"`
			} `json:"securitySchemes"`
		}
		json.NewDecoder(resp.Body).Decode(&card)
		o := card.SecuritySchemes["oauth2"]
		if o.Type != "oauth2" || o.Flows.ClientCredentials.TokenURL != p.Issuer+"/oauth2/token" {
			t.Errorf("card's oauth2 scheme: %+v", card.SecuritySchemes)
		}
		if card.SecuritySchemes["oidc"].OpenIDConnectURL != p.Issuer+"/.well-known/openid-configuration" {
			t.Errorf("card's oidc scheme: %+v", card.SecuritySchemes)
		}
	})
}

// bearerSession opens an MCP session with the go-sdk's client sending
// token as its bearer.
func bearerSession(t *testing.T, ctx context.Context, base, token string) *mcp.ClientSession {
	t.Helper()
	origin, _ := url.Parse(base)
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test-service", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: transferclient.WithBearer(nil, token, origin)}, nil)
	if err != nil {
		t.Fatalf("connect to %s/mcp with a bearer: %v", base, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// fileIDOf is the file id of a download URL, /files/<id>/<name>.
func fileIDOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	rest, ok := strings.CutPrefix(u.Path, "/files/")
	id, _, _ := strings.Cut(rest, "/")
	if !ok || id == "" {
		t.Fatalf("%s is not a download URL", raw)
	}
	return id
}

// deleteFile sends DELETE /files/<id> (no URL token) with token as the
// bearer, and returns the status and body.
func deleteFile(t *testing.T, base, id, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, base+"/files/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// withKid returns token with its header's kid replaced: the signature no
// longer matches, but the key is looked up first.
func withKid(t *testing.T, token, kid string) string {
	t.Helper()
	parts := strings.SplitN(token, ".", 3)
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	h["kid"] = kid
	raw, _ = json.Marshal(h)
	return base64.RawURLEncoding.EncodeToString(raw) + "." + parts[1] + "." + parts[2]
}

// tokenKid reads the kid of a JWT's header.
func tokenKid(t *testing.T, tok string) string {
	head, _, _ := strings.Cut(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Kid string `json:"kid"`
	}
	json.Unmarshal(b, &h)
	return h.Kid
}
