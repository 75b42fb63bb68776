package agentcore

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// records is a slog.Handler that keeps every record, for a test to read.
type records struct {
	mu    *sync.Mutex
	list  *[]map[string]any
	attrs []slog.Attr
}

func newRecords() records { return records{mu: new(sync.Mutex), list: new([]map[string]any)} }

func (r records) Enabled(context.Context, slog.Level) bool { return true }

func (r records) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]any{"level": rec.Level.String(), "msg": rec.Message}
	add := func(a slog.Attr) bool { m[a.Key] = a.Value.Resolve().Any(); return true }
	for _, a := range r.attrs {
		add(a)
	}
	rec.Attrs(add)
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.list = append(*r.list, m)
	return nil
}

func (r records) WithAttrs(attrs []slog.Attr) slog.Handler {
	r.attrs = append(slices.Clip(r.attrs), attrs...)
	return r
}

func (r records) WithGroup(string) slog.Handler { return r }

// take returns the records kept since the last take.
func (r records) take() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := *r.list
	*r.list = nil
	return out
}

// TestEveryToolCallLoggedOnceAtInfo: a tool call, stateful or stateless,
// leaves one INFO line — tool, owner, duration, inputs, outputs, error,
// request id — and nothing else at INFO (the go-sdk's session lines are
// DEBUG).
func TestEveryToolCallLoggedOnceAtInfo(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		logs := newRecords()
		srv := httptest.NewUnstartedServer(nil)
		svc, err := New(Info{Name: "t"}, Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PublicURL: "http://" + srv.Listener.Addr().String(),
			CleanupSchedule: "@every 1h", MCPStateless: stateless}, slog.New(logs))
		if err != nil {
			t.Fatal(err)
		}
		addEchoTool(svc)
		srv.Config.Handler = svc.Handler()
		srv.Start()
		cs := connect(t, srv.URL, "")
		logs.take()
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
		for _, l := range logs.take() {
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
