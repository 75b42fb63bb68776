package attack

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// TestE24OneMethodPerBody: under AGENT_AUTH=oauth the scope check and the
// dispatcher must read the same "method". A body naming two (in either
// order, or in two cases: a2a-go matches "METHOD" as method), or an
// Mcp-Method header that names another method than a 2025-11-25 body, ran
// tools with a token lacking tools:call. Each such request is refused and
// runs nothing; the same request with one honest method is 403, and with
// the scope it needs, 200 (so the refusals are the check's, not the set-up's).
func TestE24OneMethodPerBody(t *testing.T) {
	h := newHostileIdP(t)
	bin := fileagentBinary(t)
	idpHost := strings.TrimPrefix(h.srv.URL, "http://")
	start := func(stateless string) *mcptest.Agent {
		a := mcptest.NewAgent(t, bin, "AGENT_AUTH=oauth", "AGENT_OAUTH_ISSUER="+h.issuer("good"),
			"AGENT_FETCH_ALLOW_HOSTS="+idpHost, "AGENT_MCP_STATELESS="+stateless, "AGENT_SIGNING_KEY="+signingKey)
		a.Start(t)
		a.WaitFor(t, "/healthz", http.StatusOK)
		return a
	}
	token := func(a *mcptest.Agent, scopes ...string) string {
		c := accessClaims(h.issuer("good"), a.URL)
		c["scp"] = scopes
		return h.sign(t, c, "k1")
	}
	post := func(a *mcptest.Agent, path, tok, body string, hdr ...string) reply {
		t.Helper()
		hdr = append([]string{"Authorization", "Bearer " + tok, "Content-Type", "application/json",
			"Accept", "application/json, text/event-stream"}, hdr...)
		return do(t, http.MethodPost, a.URL+path, strings.NewReader(body), hdr...)
	}
	const archive = `"params":{"name":"archive_files","arguments":{"sources":["data:,x"],"name":"e24"}}`
	ran := func(r reply) bool { return strings.Contains(string(r.body), "e24.zip") }
	refused := func(t *testing.T, r reply, why string) {
		t.Helper()
		if ran(r) {
			t.Fatalf("%s: the tool ran: %s", why, r)
		}
		if r.status != http.StatusBadRequest && r.status != http.StatusForbidden {
			t.Errorf("%s: want 400 or 403, got %s", why, r)
		}
	}

	for _, mode := range []string{"true", "false"} {
		t.Run("2025-11-25 stateless="+mode, func(t *testing.T) {
			a := start(mode)
			none, caller := token(a), token(a, "tools:call")
			hdr := []string{"MCP-Protocol-Version", "2025-11-25"}
			session := func(tok string) []string {
				t.Helper()
				if mode == "true" {
					return hdr
				}
				r := post(a, "/mcp", tok, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e24","version":"1"}}}`, hdr...)
				id := r.header.Get("Mcp-Session-Id")
				if r.status != http.StatusOK || id == "" {
					t.Fatalf("initialize: %s", r)
				}
				post(a, "/mcp", tok, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, append(hdr, "Mcp-Session-Id", id)...)
				return append(hdr, "Mcp-Session-Id", id)
			}
			withNone := session(none)
			for _, body := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call",` + archive + `}`,
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list",` + archive + `}`,
				`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call",` + archive + `}`,
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"inspect_file","name":"archive_files","arguments":{"sources":["data:,x"],"name":"e24"}}}`,
			} {
				refused(t, post(a, "/mcp", none, body, withNone...), body[:60])
			}
			// The Mcp-Method header of a 2025-11-25 request is not compared
			// with the body by the go-sdk: it cannot lower the scope needed.
			refused(t, post(a, "/mcp", none, `{"jsonrpc":"2.0","id":1,"method":"tools/call",`+archive+`}`, append(withNone, "Mcp-Method", "tools/list")...), "Mcp-Method: tools/list")
			if r := post(a, "/mcp", none, `{"jsonrpc":"2.0","id":1,"method":"tools/call",`+archive+`}`, withNone...); r.status != http.StatusForbidden {
				t.Errorf("one honest tools/call without the scope: want 403, got %s", r)
			}
			// tools:call alone neither stages (files:write) nor reads (files:read).
			withCaller := session(caller)
			refused(t, post(a, "/mcp", caller, `{"jsonrpc":"2.0","id":2,"method":"tools/list","method":"files/authorizeUpload","params":{"name":"a.txt","size":1,"mimeType":"text/plain"}}`, withCaller...), "authorizeUpload")
			refused(t, post(a, "/mcp", caller, `{"jsonrpc":"2.0","id":3,"method":"tools/call","method":"resources/read","params":{"uri":"file:///x"}}`, withCaller...), "resources/read")
			if r := post(a, "/mcp", caller, `{"jsonrpc":"2.0","id":1,"method":"tools/call",`+archive+`}`, withCaller...); r.status != http.StatusOK || !ran(r) {
				t.Fatalf("the same call with tools:call does not run, the set-up is wrong: %s", r)
			}
		})
	}

	t.Run("A2A", func(t *testing.T) {
		a := start("true")
		reader := token(a, "files:read")
		msg := `"params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"data","data":{"skill":"archive_files","arguments":{"sources":["data:,x"],"name":"e24"}}}]}}`
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"tasks/get","method":"message/send",` + msg + `}`,
			`{"jsonrpc":"2.0","id":1,"method":"message/send","method":"tasks/get",` + msg + `}`,
			`{"jsonrpc":"2.0","id":1,"method":"tasks/get","METHOD":"message/send",` + msg + `}`,
			`{"jsonrpc":"2.0","id":1,"method":"tasks/get",` + msg + `}{"jsonrpc":"2.0","id":2,"method":"message/send",` + msg + `}`,
		} {
			refused(t, post(a, "/a2a", reader, body), body[:60])
		}
		// a2a-go reads "METHOD" as the method: it needs the scope of that method.
		if r := post(a, "/a2a", reader, `{"jsonrpc":"2.0","id":1,"METHOD":"message/send",`+msg+`}`); r.status != http.StatusForbidden || ran(r) {
			t.Errorf(`"METHOD":"message/send" with files:read: want 403, got %s`, r)
		}
		if r := post(a, "/a2a", token(a, "tools:call"), `{"jsonrpc":"2.0","id":1,"method":"message/send",`+msg+`}`); r.status != http.StatusOK || !ran(r) {
			t.Fatalf("message/send with tools:call does not run, the set-up is wrong: %s", r)
		}
	})
}
