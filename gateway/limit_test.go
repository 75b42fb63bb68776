package gateway_test

// Escape E23 and a row of the same review: an agent on the gateway's list
// that answers tools/list with far more than one message may hold, over
// HTTP or stdio, takes neither the gateway's memory nor its other agents;
// a produced file that trickles does not hold the host's call.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/gateway"
	"github.com/agentura/agentura/internal/testkit/heappeak"
)

// syncLog is a log the gateway writes while the test reads it.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// hostileAgent is a go-sdk agent with the tool "echo" whose tools/list is
// answered with 800 tools of 256 KiB descriptions (200 MiB), streamed as
// one JSON body or one SSE event until the gateway stops reading. It
// returns the MCP URL.
func hostileAgent(t *testing.T, sse bool) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	desc := bytes.Repeat([]byte("d"), 256<<10)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) != nil || m.Method != "tools/list" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: ")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, m.ID)
		for i := range 800 {
			if i > 0 {
				io.WriteString(w, ",")
			}
			fmt.Fprintf(w, `{"name":"t%d","inputSchema":{"type":"object"},"description":"`, i)
			if _, err := w.Write(desc); err != nil {
				return
			}
			io.WriteString(w, `"}`)
		}
		io.WriteString(w, "]}}\n\n")
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// A gateway fronting an honest agent and one that answers tools/list with
// 200 MiB (as a JSON body, as an SSE event, over stdio) starts, lists and
// serves the honest agent's tools, and logs the other's failure naming it
// and the cap — holding about the cap (32 MiB) rather than the 1.5 GB the
// whole answer took — and keeps its session: no reconnection loop.
func TestAgentOverCapLeavesTheOthersServed(t *testing.T) {
	stdio := gateway.Agent{Name: "large", Command: []string{os.Args[0]}, Env: []string{stdioAgentEnv + "=1", stdioLargeToolsEnv + "=40"}}
	for _, c := range []struct {
		name  string
		agent func(t *testing.T) gateway.Agent
		what  func(a gateway.Agent) string
	}{
		{"json", func(t *testing.T) gateway.Agent { return gateway.Agent{URL: hostileAgent(t, false)} }, func(a gateway.Agent) string { return a.URL }},
		{"sse", func(t *testing.T) gateway.Agent { return gateway.Agent{URL: hostileAgent(t, true)} }, func(a gateway.Agent) string { return a.URL }},
		{"stdio", func(*testing.T) gateway.Agent { return stdio }, func(a gateway.Agent) string { return strings.Join(a.Command, " ") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			honest := newFakeAgent(t, "alpha", false)
			honest.start()
			hostile := c.agent(t)
			var log syncLog
			var g *gateway.Gateway
			var err error
			peak := heappeak.Measure(func() {
				g, err = gateway.New(ctx, gateway.Config{Agents: []gateway.Agent{{URL: honest.url()}, hostile}, Roots: []string{t.TempDir()}, Out: t.TempDir(),
					Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			})
			if err != nil {
				t.Fatalf("the gateway did not start: %v", err)
			}
			t.Cleanup(func() { g.Close() })
			t.Logf("heap growth while starting: %.1f MiB", float64(peak)/(1<<20))
			if peak > 160<<20 {
				t.Errorf("the heap grew by %d MiB while the gateway started; want about the cap (32 MiB)", peak>>20)
			}
			h := connectHost(t, ctx, g)
			if tools := h.tools(t, ctx); !slices.Contains(tools, "work") || slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, "t") && n != "t" }) {
				t.Errorf("the host sees %v; want alpha's work, and none of the refused answer's tools", tools)
			}
			if res := h.call(t, ctx, "work"); res.IsError || resultText(res) != "worked alpha" {
				t.Errorf("work: %s", resultText(res))
			}
			want := "the answer of " + c.what(hostile) + " to tools/list passed 32 MiB, the most one message may hold"
			text := log.String()
			if !strings.Contains(text, "tools not listed") || !strings.Contains(text, want) {
				t.Errorf("the log does not report the agent's refused answer (%q):\n%s", want, text)
			}
			time.Sleep(time.Second) // a reconnection loop would show by now
			if text := log.String(); strings.Contains(text, "lost the session") {
				t.Errorf("the gateway dropped a session over the refused answer:\n%s", text)
			}
		})
	}
}

// The gateway answers its host within 20 s when a produced file trickles
// (a byte a second for 100 s): the download fails once it falls under the
// minimum rate, 10 s after its first byte, and the result names the file
// and says its download stalled.
func TestTrickledFileAnswersInTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := mcp.NewServer(&mcp.Implementation{Name: "trickle", Version: "1"}, nil)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close) // after the gateway's Close, which ends its streams
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	mux.HandleFunc("/files/slow.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		for range 100 {
			w.Write([]byte("s"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Second):
			}
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "produce"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: ts.URL + "/files/slow.txt", Name: "slow.txt"}}}, nil, nil
	})
	_, h := newGateway(t, ctx, gateway.Agent{URL: ts.URL + "/mcp"})
	start := time.Now()
	res := h.call(t, ctx, "produce")
	took := time.Since(start)
	text := resultText(res)
	if took > 20*time.Second {
		t.Errorf("the gateway answered after %v; want within 20 s", took.Round(time.Second))
	}
	if !strings.Contains(text, "slow.txt") || !strings.Contains(text, "the download stalled") {
		t.Errorf("the result says %q; want it to name slow.txt and say its download stalled", text)
	}
	t.Logf("answered after %v: %s", took.Round(100*time.Millisecond), text)
}

// max_message_bytes in a configuration file is the cap on one message; a
// negative one is refused saying what to give.
func TestLoadConfigMaxMessage(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]int64{"": 0, "max_message_bytes: 65536\n": 64 << 10} {
		p := dir + "/gw.yaml"
		os.WriteFile(p, []byte("agents: [{url: http://localhost:8001}]\n"+text), 0o600)
		cfg, err := gateway.LoadConfig(p)
		if err != nil || cfg.MaxMessageBytes != want {
			t.Errorf("%q: MaxMessageBytes %d, %v; want %d", text, cfg.MaxMessageBytes, err, want)
		}
	}
	p := dir + "/bad.yaml"
	os.WriteFile(p, []byte("agents: [{url: http://localhost:8001}]\nmax_message_bytes: -1\n"), 0o600)
	if _, err := gateway.LoadConfig(p); err == nil || !strings.Contains(err.Error(), "max_message_bytes -1") {
		t.Errorf("a negative max_message_bytes: %v", err)
	}
}

// A tool result over the cap (here 1 MiB, max_message_bytes) is a tool
// error naming the agent, and the agent's next call works: its session
// stays.
func TestToolResultOverCapIsAToolError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := mcp.NewServer(&mcp.Implementation{Name: "wordy", Version: "1"}, nil)
	for _, name := range []string{"big", "small"} {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " done"}}}, nil, nil
		})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" && m.Params.Name == "big" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, m.ID, strings.Repeat("w", 4<<20))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	g, err := gateway.New(ctx, gateway.Config{Agents: []gateway.Agent{{Name: "wordy", URL: ts.URL + "/mcp"}}, Roots: []string{t.TempDir()}, Out: t.TempDir(), MaxMessageBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	host := connectHost(t, ctx, g)
	res := host.call(t, ctx, "big")
	want := "the answer of " + ts.URL + "/mcp to tools/call passed 1 MiB, the most one message may hold"
	if !res.IsError || !strings.Contains(resultText(res), "the agent wordy failed") || !strings.Contains(resultText(res), want) {
		t.Errorf("big: is_error %v, %q; want a tool error saying %q", res.IsError, resultText(res), want)
	}
	if res := host.call(t, ctx, "small"); res.IsError || resultText(res) != "small done" {
		t.Errorf("small after big: %q", resultText(res))
	}
}
