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
	urls, oidc := URLs("https://kc.example.com/realms/agents/")
	want := []string{
		"https://kc.example.com/.well-known/oauth-authorization-server/realms/agents",
		"https://kc.example.com/.well-known/openid-configuration/realms/agents",
		"https://kc.example.com/realms/agents/.well-known/openid-configuration",
	}
	if !slices.Equal(urls, want) || !slices.Equal(oidc, []bool{false, true, true}) {
		t.Errorf("%q %v", urls, oidc)
	}
	urls, _ = URLs("https://idp.example.com")
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
