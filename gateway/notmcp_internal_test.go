package gateway

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Only answers that show an endpoint that is no MCP one refuse an agent's
// URL: not a notification's 202, not a server error (a proxy whose agent
// is starting), not a 401 (a sign-in), not a stream.
func TestOpeningAnswerNotMCP(t *testing.T) {
	decode := errors.New(`calling "initialize": failed to decode response: invalid message version tag ""`)
	other := errors.New("context deadline exceeded")
	for _, tc := range []struct {
		status int
		ctype  string
		err    error
		says   string // "" when the URL is not refused
	}{
		{http.StatusAccepted, "", other, ""},
		{http.StatusBadGateway, "text/html", other, ""},
		{http.StatusUnauthorized, "application/json", other, ""},
		{http.StatusOK, "text/event-stream", other, ""},
		{http.StatusOK, "application/json", other, ""},
		{http.StatusOK, "application/json", decode, "JSON that is no JSON-RPC answer"},
		{http.StatusOK, "text/html; charset=utf-8", other, `"text/html; charset=utf-8", not JSON-RPC`},
		{http.StatusNotFound, "text/plain", other, "404 Not Found"},
		{http.StatusMethodNotAllowed, "", other, "405 Method Not Allowed"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if tc.ctype != "" {
				w.Header().Set("Content-Type", tc.ctype)
			}
			w.WriteHeader(tc.status)
		}))
		var o openingAnswer
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
		resp, err := (&watchTransport{opening: &o}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		srv.Close()
		got := o.notMCP(tc.err)
		if tc.says == "" && got != "" || tc.says != "" && !strings.Contains(got, tc.says) {
			t.Errorf("%d %q, %v: %q; want %q", tc.status, tc.ctype, tc.err, got, tc.says)
		}
	}
}
