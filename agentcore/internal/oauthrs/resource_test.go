package oauthrs

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestScopeListReadsStringsAndArrays(t *testing.T) {
	var c struct {
		A scopeList `json:"a"`
		B scopeList `json:"b"`
	}
	if err := json.Unmarshal([]byte(`{"a":"tools:call  files:read","b":["files:write"]}`), &c); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.A, []string{"tools:call", "files:read"}) || !slices.Equal(c.B, []string{"files:write"}) {
		t.Errorf("%q %q", c.A, c.B)
	}
	if err := json.Unmarshal([]byte(`{"a":7}`), &c); err == nil {
		t.Error("a number is not a scope claim")
	}
}

func TestMetadataURLs(t *testing.T) {
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
