package attack

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// TestE21TaskIDNamesNoRecord: an empty, null or non-canonical task id
// answered -32603 naming the data folder ("read <data>/records/mcp-tasks/
// <owner key>: is a directory") once the caller's owner had one task. Each
// is now refused as a bad parameter, on both revisions, naming nothing of
// the server's.
func TestE21TaskIDNamesNoRecord(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	a := mcptest.StartAgent(t, binary(t, "github.com/agentura/agentura/cmd/composer-agent"), "AGENT_DATA_DIR="+data, "AGENT_MCP_STATELESS=true")
	hdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-11-25"}
	post := func(body string) reply {
		t.Helper()
		return do(t, http.MethodPost, a.URL+"/mcp", strings.NewReader(body), hdr...)
	}
	// The owner has a task: its record folder exists.
	r := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"compose_document","arguments":{"markdown":"# e21","format":"md"},"task":{"ttl":60000}}}`)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"taskId"`) {
		t.Fatalf("a task-augmented call: %s", r)
	}
	check := func(what string, r reply) {
		t.Helper()
		body := string(r.body)
		if !strings.Contains(body, "-32602") {
			t.Errorf("%s: %s, want -32602", what, r)
		}
		for _, m := range append(leaks(body), data, "records", "is a directory") {
			if strings.Contains(body, m) {
				t.Errorf("%s names %q: %s", what, m, r)
			}
		}
	}
	for _, id := range []string{`""`, `null`, `"."`, `".."`, `"../mcp-tasks"`, `"a/b"`} {
		for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			check("2025-11-25 "+method+" "+id, post(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":%q,"params":{"taskId":%s}}`, method, id)))
		}
	}
	c := mcptest.NewSessionless(a.URL + "/mcp")
	c.Extensions = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	for _, id := range []any{"", nil, "..", "../mcp-tasks"} {
		for _, method := range []string{"tasks/get", "tasks/cancel"} {
			ans, err := c.Send(t.Context(), method, map[string]any{"taskId": id}, nil)
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("2026-07-28 %s %#v", method, id)
			if e := ans.Response.Error; e == nil || e.Code != -32602 {
				t.Errorf("%s: %+v, want -32602", what, ans.Response)
			} else {
				for _, m := range append(leaks(e.Message), data, "records", "is a directory") {
					if strings.Contains(e.Message, m) {
						t.Errorf("%s names %q: %s", what, m, e.Message)
					}
				}
			}
		}
	}
}
