package agentcore

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noStream is the go-sdk's warning of a list change sent to a session
// whose client holds no standing stream (no GET /mcp).
const noStream = "calling notifications/resources/list_changed: rejected by transport: undelivered message: stream not connected or already closed"

// A real agent in its default, stateful mode and a real go-sdk client of
// 2025-11-25 that holds no standing stream (no GET /mcp): each file a call
// produces changes the resource list, and the go-sdk's
// notifications/resources/list_changed has nowhere to go on that session.
// The agent logs that at DEBUG, with the go-sdk's own words, and logs no
// warning.
func TestSDKLogUndeliveredListChange(t *testing.T) {
	_, srv, logs := serveLogged(t, false, slog.LevelDebug)
	cs := connectAt(t, srv.URL, "", "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"source": "data:text/plain;name=a.txt;base64,aGVsbG8="}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	// The go-sdk sends list changes 10 ms after the change.
	// Wait for the line at either level; the warnings are checked below.
	want := `level=DEBUG msg="` + noStream + `"`
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), `msg="`+noStream+`"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no line %s in the agent's log:\n%s", want, logs.String())
		}
	}
	if !strings.Contains(logs.String(), want) {
		t.Errorf("no line %s in the agent's log", want)
	}
	if !strings.Contains(logs.String(), `level=DEBUG msg="session initialized"`) {
		t.Errorf("the go-sdk's INFO line of a new session is not at DEBUG:\n%s", logs.String())
	}
	if w := mcptest.Warnings(logs.String()); len(w) > 0 {
		t.Errorf("the agent logged warnings over an ordinary call:\n%s", strings.Join(w, "\n"))
	}
}
