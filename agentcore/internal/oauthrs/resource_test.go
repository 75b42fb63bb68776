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
