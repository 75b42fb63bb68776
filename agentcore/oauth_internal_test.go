package agentcore

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestJSONRPCMethods(t *testing.T) {
	for body, want := range map[string][]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`:                                             {"tools/call"},
		`{"params":{"a":[1,{"method":"x"}],"s":"` + strings.Repeat("y", 70000) + `"},"method":"resources/read"}`: {"resources/read"},
		`[{"method":"tools/list"},{"id":2,"method":"tools/call"}]`:                                               {"tools/list", "tools/call"},
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                                                   {""},
		`"just a string"`:                                                                                        nil,
	} {
		got, err := jsonRPCMethods(jsontext.NewDecoder(strings.NewReader(body)))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%.60s: %q %v, want %q", body, got, err, want)
		}
	}
}

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

func TestQuotableKeepsChallengesParseable(t *testing.T) {
	if got := quotable("bad \"kid\"\\\n\u00e9"); strings.ContainsAny(got, "\"\\\n\u00e9") {
		t.Errorf("%q", got)
	}
}
