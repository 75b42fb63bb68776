package agentcore

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines returns the JSON log records written since the last call.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	s.b.Reset()
	return out
}

// TestEveryToolCallLoggedOnceAtInfo: a tool call, stateful or stateless,
// leaves one INFO line — tool, owner, duration, inputs, outputs, error,
// request id — and nothing else at INFO (the go-sdk's session lines are
// DEBUG).
func TestEveryToolCallLoggedOnceAtInfo(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		var logs syncBuffer
		srv := httptest.NewUnstartedServer(nil)
		svc, err := New(Info{Name: "t"}, Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PublicURL: "http://" + srv.Listener.Addr().String(),
			CleanupSchedule: "@every 1h", MCPStateless: stateless}, slog.New(slog.NewJSONHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		addEchoTool(svc)
		srv.Config.Handler = svc.Handler()
		srv.Start()
		cs := connect(t, srv.URL, "")
		logs.lines(t)
		for _, args := range []map[string]any{
			{"source": "data:text/plain;name=n.txt,hi"},
			{"source": "n.txt"}, // an unresolved reference: the call fails
		} {
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
				t.Fatal(err)
			}
		}
		cs.Close()
		srv.Close()
		svc.Close()
		var calls []map[string]any
		for _, l := range logs.lines(t) {
			if l["level"] == "INFO" {
				calls = append(calls, l)
			}
		}
		if len(calls) != 2 || calls[0]["msg"] != "tool call" || calls[1]["msg"] != "tool call" {
			t.Fatalf("stateless=%v: INFO lines %v; want one \"tool call\" per call and nothing else", stateless, calls)
		}
		ok, failed := calls[0], calls[1]
		for _, key := range []string{"tool", "owner", "duration", "inputs", "outputs", "request_id"} {
			if ok[key] == nil {
				t.Errorf("stateless=%v: tool call line lacks %s: %v", stateless, key, ok)
			}
		}
		if ok["tool"] != "echo" || ok["owner"] != AnonymousOwner || ok["err"] != nil ||
			!strings.Contains(jsonOf(ok["inputs"]), "n.txt (2 B)") || !strings.Contains(jsonOf(ok["outputs"]), "n.txt (2 B)") {
			t.Errorf("stateless=%v: tool call line %v", stateless, ok)
		}
		if e, _ := failed["err"].(string); !strings.Contains(e, "n.txt") {
			t.Errorf("stateless=%v: failed call logged %v; want its error", stateless, failed)
		}
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
