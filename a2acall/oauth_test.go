package a2acall_test

// Client credentials against fakes of an identity provider, of a hostile
// agent and of an agent that takes the provider's tokens: the client's
// secret goes to its own issuer's token endpoint, never to one an agent
// names.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/a2acall"
)

const (
	peerID     = "peer-agent"
	peerSecret = "peer-secret-never-leaves"
	issuedTok  = "issued-access-token"
)

// fakeIssuer is an identity provider: RFC 8414 metadata and a token
// endpoint issuing issuedTok to peerID for the resource it is asked for.
type fakeIssuer struct {
	*httptest.Server
	mu        sync.Mutex
	resources []string      // the resource of each token request
	stall     chan struct{} // when not nil, token requests wait for it (or their end)
}

func startIssuer(t *testing.T) *fakeIssuer {
	f := &fakeIssuer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{"issuer": f.URL, "token_endpoint": f.URL + "/oauth2/token",
				"authorization_endpoint": f.URL + "/oauth2/auth", "code_challenge_methods_supported": []string{"S256"}})
		case "/oauth2/token":
			f.mu.Lock()
			stall := f.stall
			f.mu.Unlock()
			if stall != nil {
				select {
				case <-stall:
				case <-r.Context().Done():
				}
				return
			}
			id, secret, _ := r.BasicAuth()
			if id != peerID || secret != peerSecret || r.FormValue("grant_type") != "client_credentials" {
				w.WriteHeader(http.StatusUnauthorized)
				json.NewEncoder(w).Encode(map[string]any{"error": "invalid_client"})
				return
			}
			f.mu.Lock()
			f.resources = append(f.resources, r.FormValue("resource"))
			f.mu.Unlock()
			json.NewEncoder(w).Encode(map[string]any{"access_token": issuedTok, "token_type": "Bearer", "expires_in": 3600})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// startAgent is an agent whose card names tokenURL in its client-credentials
// flow and whose protected-resource metadata names authServers; its /a2a
// answers "hello" to a request bearing issuedTok, 401 otherwise.
func startAgent(t *testing.T, tokenURL string, authServers ...string) string {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/agent-card.json":
			json.NewEncoder(w).Encode(a2a.AgentCard{
				Name: "fake", Description: "a fake agent", Version: "1", ProtocolVersion: "0.3.0",
				URL: srv.URL + "/a2a", PreferredTransport: a2a.TransportProtocolJSONRPC,
				DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
				Skills: []a2a.AgentSkill{{ID: "echo", Name: "echo", Description: "says hello", Tags: []string{"x"}}},
				SecuritySchemes: a2a.NamedSecuritySchemes{"oauth2": a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{
					ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: tokenURL, Scopes: map[string]string{"tools:call": "call tools"}}}}},
				Security: []a2a.SecurityRequirements{{"oauth2": a2a.SecuritySchemeScopes{"tools:call"}}},
			})
		case "/.well-known/oauth-protected-resource":
			json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL, "authorization_servers": authServers})
		case "/a2a":
			if r.Header.Get("Authorization") != "Bearer "+issuedTok {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			var req struct {
				ID any `json:"id"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{
				"kind": "message", "messageId": "m1", "role": "agent", "parts": []any{map[string]any{"kind": "text", "text": "hello"}}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestClientCredentialsGoOnlyToTheirIssuer(t *testing.T) {
	issuer := startIssuer(t)
	var attackerHits atomic.Int32
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attackerHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "x", "token_type": "Bearer", "issuer": "x"})
	}))
	defer attacker.Close()
	creds := &a2acall.ClientCredentials{Issuer: issuer.URL, ClientID: peerID, ClientSecret: peerSecret}
	ctx := context.Background()

	refused := func(t *testing.T, c *a2acall.Client, agent string, want ...string) {
		t.Helper()
		_, err := c.CallSkill(ctx, agent, "echo", nil)
		if err == nil {
			t.Fatal("the call succeeded")
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("the error does not name %q: %v", w, err)
			}
		}
		if n := attackerHits.Load(); n != 0 {
			t.Errorf("the attacker's endpoint got %d requests", n)
		}
	}

	t.Run("a card naming another token endpoint is refused", func(t *testing.T) {
		agent := startAgent(t, attacker.URL+"/token", issuer.URL)
		refused(t, &a2acall.Client{Credentials: creds, Dir: t.TempDir()}, agent,
			"token endpoint "+attacker.URL+"/token", issuer.URL+"/oauth2/token", "refused")
	})

	t.Run("an agent taking tokens of another issuer is refused", func(t *testing.T) {
		agent := startAgent(t, attacker.URL+"/token", attacker.URL)
		refused(t, &a2acall.Client{Credentials: creds, Dir: t.TempDir()}, agent,
			attacker.URL, "not of issuer "+issuer.URL, "not sent")
	})

	t.Run("credentials without an issuer are an error", func(t *testing.T) {
		agent := startAgent(t, issuer.URL+"/oauth2/token", issuer.URL)
		noIssuer := &a2acall.ClientCredentials{ClientID: peerID, ClientSecret: peerSecret}
		refused(t, &a2acall.Client{Credentials: noIssuer, Dir: t.TempDir()}, agent, "ClientCredentials.Issuer is empty", "set it")
	})

	issuer.mu.Lock()
	n := len(issuer.resources)
	issuer.mu.Unlock()
	if n != 0 {
		t.Fatalf("refused calls asked the issuer for %d tokens", n)
	}

	t.Run("a token of the issuer, for the agent, reused by the clients sharing the credentials", func(t *testing.T) {
		agent := startAgent(t, issuer.URL+"/oauth2/token", issuer.URL+"/")
		for range 2 {
			// A Client per call, as a tool makes one with the call's folder.
			c := &a2acall.Client{Credentials: creds, Dir: t.TempDir()}
			res, err := c.CallSkill(ctx, agent, "echo", nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "hello" {
				t.Errorf("text %q", res.Text)
			}
		}
		issuer.mu.Lock()
		defer issuer.mu.Unlock()
		if len(issuer.resources) != 1 || issuer.resources[0] != agent {
			t.Errorf("token requests for %q, want one for %s", issuer.resources, agent)
		}
	})
}

// A token request is the call's: a provider that does not answer holds a
// call only until the call's deadline.
func TestTokenRequestKeepsTheCallsDeadline(t *testing.T) {
	issuer := startIssuer(t)
	stall := make(chan struct{})
	defer close(stall)
	issuer.mu.Lock()
	issuer.stall = stall
	issuer.mu.Unlock()
	agent := startAgent(t, issuer.URL+"/oauth2/token", issuer.URL)
	creds := &a2acall.ClientCredentials{Issuer: issuer.URL, ClientID: peerID, ClientSecret: peerSecret}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := (&a2acall.Client{Credentials: creds, Dir: t.TempDir()}).CallSkill(ctx, agent, "echo", nil)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call whose provider does not answer: %v, want its deadline", err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the call returned %v after its 500 ms deadline", took)
	}
}

// TestNoCredentialsForAnOAuthAgent: a client with neither credentials nor a
// token is refused before it calls an agent whose card asks for OAuth
// tokens, with ErrNoCredentials naming the token endpoint; a client with a
// token sends it (the fake agent refuses it: a 401).
func TestNoCredentialsForAnOAuthAgent(t *testing.T) {
	issuer := startIssuer(t)
	agent := startAgent(t, issuer.URL+"/oauth2/token", issuer.URL)
	_, err := (&a2acall.Client{Dir: t.TempDir()}).CallSkill(context.Background(), agent, "echo", nil)
	if !errors.Is(err, a2acall.ErrNoCredentials) || !strings.Contains(err.Error(), issuer.URL+"/oauth2/token") || !strings.Contains(err.Error(), "Client.Credentials") {
		t.Errorf("without credentials: %v, want ErrNoCredentials naming the token endpoint and Client.Credentials", err)
	}
	_, err = (&a2acall.Client{Token: "some-token", Dir: t.TempDir()}).CallSkill(context.Background(), agent, "echo", nil)
	if err == nil || errors.Is(err, a2acall.ErrNoCredentials) || !strings.Contains(err.Error(), "401") {
		t.Errorf("with a token: %v, want the agent's 401", err)
	}
}
