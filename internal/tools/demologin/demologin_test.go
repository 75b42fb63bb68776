package demologin

import "testing"

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
