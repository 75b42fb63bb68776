package demologin

import (
	"net/url"
	"testing"
)

func TestAllowedAudienceFollowsHydrasRule(t *testing.T) {
	allowed := []string{"http://localhost:8001", "https://agents.example.com/team"}
	for aud, want := range map[string]bool{
		"http://localhost:8001/mcp":             true,
		"http://localhost:8001":                 true,
		"http://localhost:8002/mcp":             false, // another port is another host
		"https://localhost:8001/mcp":            false,
		"https://agents.example.com/team/a/mcp": true,
		"https://agents.example.com/teams/mcp":  false, // a sibling path is not below
		"urn:other":                             false,
	} {
		if got := allowedAudience(allowed, aud); got != want {
			t.Errorf("%s: %v, want %v", aud, got, want)
		}
	}
}

func TestParseUsers(t *testing.T) {
	u, err := ParseUsers("alice:pw1, bob:pw:2")
	if err != nil || u["alice"] != "pw1" || u["bob"] != "pw:2" {
		t.Errorf("%v %v", u, err)
	}
	for _, bad := range []string{"", "alice", ":pw", "alice:"} {
		if _, err := ParseUsers(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestLoginPolicyNamesWhereTheSignInGoes(t *testing.T) {
	a := &app{idpOrigin: "https://localhost:4444"}
	var req loginRequest
	req.RequestURL = "https://localhost:4444/oauth2/auth?client_id=agentura-cli&redirect_uri=http%3A%2F%2F127.0.0.1%3A41234%2Fcallback&state=x"
	req.Client.RedirectURIs = []string{"http://127.0.0.1/callback"}
	for _, c := range []struct {
		name, requestURL string
		registered       []string
		want             string
	}{
		{"the requested redirect URI", req.RequestURL, req.Client.RedirectURIs,
			"default-src 'none'; form-action 'self' https://localhost:4444 http://127.0.0.1:41234"},
		{"none requested: the registered ones", "https://localhost:4444/oauth2/auth?client_id=x", []string{"http://127.0.0.1/callback", "https://app.example/cb"},
			"default-src 'none'; form-action 'self' https://localhost:4444 http://127.0.0.1 https://app.example"},
		{"a native app's scheme", "https://localhost:4444/oauth2/auth?redirect_uri=com.example.app%3A%2Fcallback", nil,
			"default-src 'none'; form-action 'self' https://localhost:4444 com.example.app:"},
		{"the provider's own origin once", "https://localhost:4444/oauth2/auth?redirect_uri=https%3A%2F%2Flocalhost%3A4444%2Fcb", nil,
			"default-src 'none'; form-action 'self' https://localhost:4444"},
		{"nothing that could inject a directive", "https://localhost:4444/oauth2/auth?redirect_uri=" + url.QueryEscape("https://a.example;script-src *") +
			"&redirect_uri=" + url.QueryEscape("http://[::1]:5000/cb") + "&redirect_uri=" + url.QueryEscape("/relative"), nil,
			"default-src 'none'; form-action 'self' https://localhost:4444"},
	} {
		r := req
		r.RequestURL, r.Client.RedirectURIs = c.requestURL, c.registered
		if got := a.loginPolicy(r); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestNewNeedsHydrasPublicURL(t *testing.T) {
	users := map[string]string{"alice": "pw"}
	for _, bad := range []string{"", "localhost:4444", "ftp://idp.example", "https://"} {
		if _, err := New(Config{AdminURL: "http://127.0.0.1:4445", PublicURL: bad, Users: users}); err == nil {
			t.Errorf("public URL %q accepted", bad)
		}
	}
	if _, err := New(Config{AdminURL: "http://127.0.0.1:4445", PublicURL: "https://LocalHost:4444/hydra/", Users: users}); err != nil {
		t.Fatal(err)
	}
	if src, _ := formTarget("https://LocalHost:4444/hydra/"); src != "https://localhost:4444" {
		t.Errorf("the provider's source is %q", src)
	}
}
