package httpguard

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestJSONRPCMethods(t *testing.T) {
	for body, want := range map[string][]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`:                                             {"tools/call"},
		`{"params":{"a":[1,{"method":"x"}],"s":"` + strings.Repeat("y", 70000) + `"},"method":"resources/read"}`: {"resources/read"},
		`[{"method":"tools/list"},{"id":2,"method":"tools/call"}]`:                                               {"tools/list", "tools/call"},
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                                                   {""},
		`{"jsonrpc":"2.0","id":1,"Method":"message/send"}`:                                                       {"message/send"},
		`"just a string"`:              nil,
		`  {"method":"ping"}  ` + "\n": {"ping"},
	} {
		got, err := JSONRPCMethods([]byte(body))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%.60s: %q %v, want %q", body, got, err, want)
		}
	}
}

// TestJSONRPCMethodsRefusesAmbiguousBodies: E24. A body that one parser
// reads one way and another the other is refused, not guessed at.
func TestJSONRPCMethodsRefusesAmbiguousBodies(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","METHOD":"message/send"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tasks/get","method":"message/send"}`,
		`[{"method":"ping"},{"method":"tools/list","method":"tools/call"}]`,
		`{"method":"tools/call","params":{"name":"a","name":"b"}}`,
		`{"method":"tools/call","params":{"arguments":{"source":"x","SOURCE":"y"}}}`,
		`{"method":"tools/call","params":{"_meta":{"agentura/owner":"a","agentura/owner":"b"}}}`,
		"{\"method\":\"tools/call\",\"params\":{\"kind\":1,\"\u212aind\":2}}", // the Kelvin sign folds to k
		"{\"method\":\"tools/call\",\"params\":{\"x\":\"\xff\"}}",
		`{"method":"tasks/get"}{"method":"message/send"}`,
		strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
	} {
		_, err := JSONRPCMethods([]byte(body))
		if !errors.Is(err, ErrAmbiguous) {
			t.Errorf("%.70q: %v, want ErrAmbiguous", body, err)
		}
	}
	if _, err := JSONRPCMethods([]byte(`{"method":`)); err == nil || errors.Is(err, ErrAmbiguous) {
		t.Errorf("a cut body: %v, want a syntax error", err)
	}
	_, err := JSONRPCMethods([]byte(`{"method":"tools/list","method":"tools/call"}`))
	if !strings.Contains(err.Error(), `"method"`) || !strings.Contains(err.Error(), "send each member once") {
		t.Errorf("the error does not say what to change: %v", err)
	}
}
