package agentcore

import (
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

func TestQuotableKeepsChallengesParseable(t *testing.T) {
	if got := quotable("bad \"kid\"\\\n\u00e9"); strings.ContainsAny(got, "\"\\\n\u00e9") {
		t.Errorf("%q", got)
	}
}
