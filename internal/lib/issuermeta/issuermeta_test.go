package issuermeta

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestURLs(t *testing.T) {
	urls, oidc := metadataURLs("https://kc.example.com/realms/agents/")
	want := []string{
		"https://kc.example.com/.well-known/oauth-authorization-server/realms/agents",
		"https://kc.example.com/.well-known/openid-configuration/realms/agents",
		"https://kc.example.com/realms/agents/.well-known/openid-configuration",
	}
	if !slices.Equal(urls, want) || !slices.Equal(oidc, []bool{false, true, true}) {
		t.Errorf("%q %v", urls, oidc)
	}
	urls, _ = metadataURLs("https://idp.example.com")
	if !slices.Equal(urls, []string{"https://idp.example.com/.well-known/oauth-authorization-server", "https://idp.example.com/.well-known/openid-configuration"}) {
		t.Errorf("%q", urls)
	}
}

// An issuer with only OpenID Connect discovery is found at the second URL;
// one whose document names another issuer is refused.
func TestRead(t *testing.T) {
	var srv *httptest.Server
	issuerInDoc := ""
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": issuerInDoc, "token_endpoint": srv.URL + "/token",
			"authorization_endpoint": srv.URL + "/auth", "code_challenge_methods_supported": []string{"S256"}})
	}))
	defer srv.Close()

	issuerInDoc = srv.URL
	m, err := Read(context.Background(), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !m.OIDC || m.URL != srv.URL+"/.well-known/openid-configuration" || m.TokenEndpoint != srv.URL+"/token" {
		t.Errorf("%+v %+v", m, m.AuthServerMeta)
	}

	issuerInDoc = "https://elsewhere.example.com"
	if _, err := Read(context.Background(), srv.URL, nil); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("a document naming another issuer: %v", err)
	}
	if _, err := Read(context.Background(), srv.URL+"/nothing", nil); err == nil || !strings.Contains(err.Error(), "publishes no metadata") {
		t.Errorf("no metadata: %v", err)
	}
}

// What a provider publishes decides, not what the go-sdk's client flow
// needs: metadata without code_challenge_methods_supported (Microsoft
// Entra ID's) is read; an oversized document, a plain-http endpoint off
// loopback and a page that is not JSON are refused, each saying so.
func TestReadChecks(t *testing.T) {
	var srv *httptest.Server
	doc := func() map[string]any {
		return map[string]any{"issuer": srv.URL, "token_endpoint": srv.URL + "/token", "jwks_uri": srv.URL + "/keys"}
	}
	var serve func(w http.ResponseWriter)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/oauth-authorization-server" {
			http.NotFound(w, r)
			return
		}
		serve(w)
	}))
	defer srv.Close()
	jsonDoc := func(d map[string]any) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			json.NewEncoder(w).Encode(d)
		}
	}

	serve = jsonDoc(doc())
	m, err := Read(context.Background(), srv.URL, nil)
	if err != nil || m.TokenEndpoint != srv.URL+"/token" || m.OIDC {
		t.Fatalf("metadata without PKCE methods: %v %+v", err, m)
	}

	huge := doc()
	huge["padding"] = strings.Repeat("x", maxMetadataBytes)
	serve = jsonDoc(huge)
	if _, err := Read(context.Background(), srv.URL, nil); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("an oversized document: %v", err)
	}

	plain := doc()
	plain["token_endpoint"] = "http://idp.example.com/token"
	serve = jsonDoc(plain)
	if _, err := Read(context.Background(), srv.URL, nil); err == nil || !strings.Contains(err.Error(), "token_endpoint") || !strings.Contains(err.Error(), "neither https") {
		t.Errorf("a plain-http token endpoint: %v", err)
	}

	serve = func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>sign in</html>"))
	}
	if _, err := Read(context.Background(), srv.URL, nil); err == nil || !strings.Contains(err.Error(), "not application/json") {
		t.Errorf("an HTML page: %v", err)
	}

	serve = func(w http.ResponseWriter) { http.Error(w, "down", http.StatusBadGateway) }
	if _, err := Read(context.Background(), srv.URL, nil); err == nil || !strings.Contains(err.Error(), "502") {
		t.Errorf("a 502: %v", err)
	}
}
