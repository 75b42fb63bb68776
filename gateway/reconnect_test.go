package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/gateway"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// The gateway through an agent's life cycle, between go-sdk peers: the
// agent a go-sdk server on real HTTP that the test stops, replaces and
// starts at will, the host in memory, the gateway the real one. Each case
// runs against a stateful agent (2025-11-25, a session through initialize)
// and a stateless one (2026-07-28).

// revisions are the two ways an agent is served: with sessions, or without.
var revisions = []struct {
	name      string
	stateless bool
}{{"2025-11-25", false}, {"2026-07-28", true}}

// fakeAgent is a go-sdk MCP server on a fixed loopback address whose
// handler (and so its sessions) can be replaced, and whose listener can be
// closed and opened again, as an agent restarting.
type fakeAgent struct {
	t         *testing.T
	addr      string
	stateless bool
	server    *mcp.Server
	calls     atomic.Int32 // runs of the tool "work"
	handler   atomic.Pointer[http.Handler]
	mu        sync.Mutex
	ts        *httptest.Server
	// onWork, if set, runs inside each call of "work".
	onWork func(n int32)
}

func newFakeAgent(t *testing.T, name string, stateless bool) *fakeAgent {
	f := &fakeAgent{t: t, stateless: stateless}
	f.server = mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	mcp.AddTool(f.server, &mcp.Tool{Name: "work", Description: "works"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		n := f.calls.Add(1)
		if f.onWork != nil {
			f.onWork(n)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "worked " + name}}}, nil, nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	ln.Close()
	f.replace()
	t.Cleanup(f.stop)
	return f
}

func (f *fakeAgent) url() string { return "http://" + f.addr + "/mcp" }

// replace gives the agent a new handler: the sessions of the old one are
// unknown to it, as after a restart.
func (f *fakeAgent) replace() {
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.server },
		&mcp.StreamableHTTPOptions{Stateless: f.stateless})
	f.handler.Store(&h)
}

// start serves the agent on its address.
func (f *fakeAgent) start() {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ln, err = net.Listen("tcp", f.addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		f.t.Fatalf("listen on %s again: %v", f.addr, err)
	}
	f.ts = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*f.handler.Load()).ServeHTTP(w, r)
	})}}
	f.ts.Start()
}

// stop closes the agent's listener and every connection to it.
func (f *fakeAgent) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ts != nil {
		// The listener first: a client reconnecting between the two closes
		// would hold a stream the server's Close then waits on for ever.
		f.ts.Listener.Close()
		f.ts.CloseClientConnections()
		f.ts.Close()
		f.ts = nil
	}
}

// restart is stop, a new handler (its sessions forgotten), and start.
func (f *fakeAgent) restart() {
	f.stop()
	f.replace()
	f.start()
}

// host is a go-sdk client connected in memory to a gateway's server.
type host struct {
	session     *mcp.ClientSession
	listChanged chan struct{}
}

func newGateway(t *testing.T, ctx context.Context, agents ...gateway.Agent) (*gateway.Gateway, *host) {
	t.Helper()
	g, err := gateway.New(ctx, gateway.Config{Agents: agents, Roots: []string{t.TempDir()}, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	h := connectHost(t, ctx, g)
	return g, h
}

func (h *host) tools(t *testing.T, ctx context.Context) []string {
	t.Helper()
	var names []string
	for tool, err := range h.session.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func (h *host) call(t *testing.T, ctx context.Context, name string) *mcp.CallToolResult {
	t.Helper()
	res, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v: the gateway must answer with a result, not fail", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// An agent that restarted no longer knows the gateway's session: the call
// it answers with 404 never reached the tool, so the gateway opens a new
// session and sends it again; the tool runs once. (Without sessions there
// is nothing to lose: the call simply works.)
func TestCallAfterTheAgentForgotTheSession(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			a := newFakeAgent(t, "alpha", rev.stateless)
			a.start()
			_, h := newGateway(t, ctx, gateway.Agent{URL: a.url()})
			if res := h.call(t, ctx, "work"); res.IsError {
				t.Fatalf("first call: %s", resultText(res))
			}
			// The old handler keeps serving the connections it has (the
			// gateway's standing stream among them, so nothing tells the
			// gateway); every new request meets one that knows no session.
			a.replace()
			res := h.call(t, ctx, "work")
			if res.IsError || resultText(res) != "worked alpha" {
				t.Fatalf("call after the agent forgot the session: %s", resultText(res))
			}
			if n := a.calls.Load(); n != 2 {
				t.Errorf("the tool ran %d times, want 2 (once per host call)", n)
			}
		})
	}
}

// A call that reached the agent and broke off (the connection dropped
// while the tool ran) may have run: it is a tool error saying so, it is
// not repeated, and the next call works.
func TestCallThatMayHaveRunIsNotRepeated(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			a := newFakeAgent(t, "alpha", rev.stateless)
			a.onWork = func(n int32) {
				if n == 1 {
					a.mu.Lock()
					a.ts.CloseClientConnections() // the agent's host dropped every connection mid-call
					a.mu.Unlock()
				}
			}
			a.start()
			_, h := newGateway(t, ctx, gateway.Agent{URL: a.url()})
			res := h.call(t, ctx, "work")
			if !res.IsError || !strings.Contains(resultText(res), "may or may not have run") {
				t.Fatalf("a call cut off while it ran: is_error %v, %q; want a tool error saying it may have run", res.IsError, resultText(res))
			}
			if n := a.calls.Load(); n != 1 {
				t.Errorf("the tool ran %d times, want once: a call that may have run is not repeated", n)
			}
			waitFor(t, &sync.Mutex{}, func() bool {
				r, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: "work", Arguments: map[string]any{}})
				return err == nil && !r.IsError
			}, func() string { return "the next call did not work" })
		})
	}
}

// One agent of two is down when the gateway starts: the gateway starts with
// the other; a call to a tool of the one away is a tool error; once it runs,
// its tools appear (the host is told) and work; stopped again, its tools
// stay listed and a call says it is away, while the other agent's work.
func TestAgentDownAtStartAndAway(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			up := newFakeAgent(t, "alpha", rev.stateless)
			up.start()
			late := newFakeAgent(t, "beta", rev.stateless)
			late.server.AddTool(&mcp.Tool{Name: "late_only", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil
			})
			started := time.Now()
			_, h := newGateway(t, ctx, gateway.Agent{Name: "alpha", URL: up.url()}, gateway.Agent{Name: "beta", URL: late.url()})
			if d := time.Since(started); d > 30*time.Second {
				t.Errorf("the gateway took %v to start with an agent down", d)
			}
			if got := h.tools(t, ctx); !slices.Equal(got, []string{"add_file", "list_files", "work"}) {
				t.Fatalf("tools with beta down: %v", got)
			}
			if res := h.call(t, ctx, "work"); res.IsError {
				t.Fatalf("alpha's work with beta down: %s", resultText(res))
			}

			late.start()
			var got []string
			for deadline := time.Now().Add(60 * time.Second); ; {
				select {
				case <-h.listChanged:
				case <-time.After(time.Second):
				}
				if got = h.tools(t, ctx); slices.Contains(got, "late_only") || time.Now().After(deadline) {
					break
				}
			}
			if want := []string{"add_file", "alpha_work", "beta_work", "late_only", "list_files"}; !slices.Equal(got, want) {
				t.Fatalf("tools once beta runs: %v, want %v", got, want)
			}
			for _, name := range []string{"late_only", "beta_work", "alpha_work"} {
				if res := h.call(t, ctx, name); res.IsError {
					t.Errorf("%s: %s", name, resultText(res))
				}
			}

			late.stop()
			res := h.call(t, ctx, "beta_work")
			text := resultText(res)
			if !res.IsError || !strings.Contains(text, "beta is not reachable") || !strings.Contains(text, "Nothing was sent") || strings.Contains(text, late.addr) {
				t.Errorf("a tool of an agent away: is_error %v, %q; want a tool error naming beta (not its address)", res.IsError, text)
			}
			if got := h.tools(t, ctx); !slices.Contains(got, "beta_work") {
				t.Errorf("beta's tools went with beta: %v", got)
			}
			if res := h.call(t, ctx, "alpha_work"); res.IsError {
				t.Errorf("alpha's work with beta away: %s", resultText(res))
			}
			late.restart()
			waitFor(t, &sync.Mutex{}, func() bool {
				r, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: "beta_work", Arguments: map[string]any{}})
				return err == nil && !r.IsError
			}, func() string { return "beta_work did not work again once beta ran" })
		})
	}
}

// Two agents with a tool of the same name: each is named after its agent,
// the second of two agents of the same name with "_2", and each tool's
// description says whose it is.
func TestClashingToolsSayWhoseTheyAre(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := newFakeAgent(t, "twin", true)
	a.start()
	b := newFakeAgent(t, "twin", true)
	b.start()
	_, h := newGateway(t, ctx, gateway.Agent{URL: a.url()}, gateway.Agent{URL: b.url()})
	desc := map[string]string{}
	for tool, err := range h.session.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		desc[tool.Name] = tool.Description
	}
	for name, want := range map[string]string{
		"twin_work":   "(The tool work of agent twin; agent twin_2 has a tool of the same name.)",
		"twin_2_work": "(The tool work of agent twin_2; agent twin has a tool of the same name.)",
	} {
		if d, ok := desc[name]; !ok || !strings.HasPrefix(d, "works") || !strings.HasSuffix(d, want) {
			t.Errorf("%s: description %q, want it to end with %q (tools: %v)", name, d, want, desc)
		}
	}
	for name, want := range map[string]string{"twin_work": "worked twin", "twin_2_work": "worked twin"} {
		if res := h.call(t, ctx, name); res.IsError || resultText(res) != want {
			t.Errorf("%s: %s", name, resultText(res))
		}
	}
	if a.calls.Load() != 1 || b.calls.Load() != 1 {
		t.Errorf("twin ran %d, twin_2 %d calls; want one each", a.calls.Load(), b.calls.Load())
	}
}

// stdioAgentEnv makes the test binary a stdio agent: a go-sdk server on
// stdin/stdout with a tool "work" and a tool "crash" that exits at once;
// with stdioLargeToolsEnv set to N, N tools more, of 1 MiB descriptions.
const (
	stdioAgentEnv      = "AGENTURA_GATEWAY_TEST_STDIO_AGENT"
	stdioLargeToolsEnv = "AGENTURA_GATEWAY_TEST_LARGE_TOOLS"
)

func serveStdioAgent() {
	s := mcp.NewServer(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "work"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("worked in process %d", os.Getpid())}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	n, _ := strconv.Atoi(os.Getenv(stdioLargeToolsEnv))
	desc := strings.Repeat("d", 1<<20)
	for i := range n {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("large%d", i), Description: desc}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	s.Run(context.Background(), &mcp.StdioTransport{MaxLineLength: -1})
}

// A stdio agent that dies is started again: the call it died in is a tool
// error that says it may have run, the next call works, in a new process.
func TestStdioAgentStartedAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, h := newGateway(t, ctx, gateway.Agent{Name: "local", Command: []string{os.Args[0]}, Env: []string{stdioAgentEnv + "=1"}})
	first := h.call(t, ctx, "work")
	if first.IsError {
		t.Fatalf("work: %s", resultText(first))
	}
	res := h.call(t, ctx, "crash")
	if text := resultText(res); !res.IsError || !strings.Contains(text, "the agent local stopped answering during the call") {
		t.Errorf("crash: is_error %v, %q; want a tool error saying the agent stopped during the call", res.IsError, text)
	}
	var again string
	waitFor(t, &sync.Mutex{}, func() bool {
		r, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: "work", Arguments: map[string]any{}})
		if err == nil && !r.IsError {
			again = resultText(r)
			return true
		}
		return false
	}, func() string { return "work did not work again after the agent died" })
	if again == resultText(first) {
		t.Errorf("work answered %q after the crash, as before it: want a new process", again)
	}
}

// An agent that restarts with a new tool is one change of the host's tool
// list, told once: a listing that finds the same tools again (here the
// agent telling of a change that changes nothing; after a real restart
// the reconnection's listing and a second one) adds nothing anew, so the
// host is not told again. The host was told twice per restart.
func TestAgentRestartIsOneListChange(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			a := newFakeAgent(t, "alpha", rev.stateless)
			a.start()
			_, h := newGateway(t, ctx, gateway.Agent{URL: a.url()})
			if res := h.call(t, ctx, "work"); res.IsError {
				t.Fatalf("first call: %s", resultText(res))
			}
			time.Sleep(500 * time.Millisecond) // anything the start told is told by now
			for len(h.listChanged) > 0 {
				<-h.listChanged
			}
			// Its new version has one more tool, which appears.
			newTool := func() {
				a.server.AddTool(&mcp.Tool{Name: "new_tool", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new"}}}, nil
				})
			}
			a.stop()
			newTool()
			a.replace()
			a.start()
			waitFor(t, &sync.Mutex{}, func() bool { return slices.Contains(h.tools(t, ctx), "new_tool") },
				func() string { return "the restarted agent's new tool did not appear" })
			if res := h.call(t, ctx, "new_tool"); res.IsError {
				t.Fatalf("new_tool: %s", resultText(res))
			}
			newTool()                   // the same tool again: the agent tells the gateway, which lists its tools again
			time.Sleep(2 * time.Second) // a second notification would come by now
			if n := len(h.listChanged); n != 1 {
				t.Errorf("the host was told %d times that the tool list changed, want once", n)
			}
		})
	}
}

// A URL that answers, but not as an MCP endpoint — an agent's A2A card or
// its A2A endpoint, given by mistake — is refused when the gateway starts,
// once its connect window (2 s here) has passed, with the reason and what
// to give instead; the gateway ran before with no tools of it and kept
// trying, saying the agent was not reachable.
func TestNoMCPEndpointRefused(t *testing.T) {
	a := mcptest.StartAgent(t, fileagentBin)
	// A server that hands out the same JSON, no agent card, for any request.
	status := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status": "ok", "skills": []}`)
	}))
	defer status.Close()
	for _, tc := range []struct{ base, path, says string }{
		{status.URL, "/status", "JSON that is no JSON-RPC answer (an A2A agent card, say)"},
		{a.URL, "/nothing-here", "404 Not Found"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		started := time.Now()
		g, err := gateway.New(ctx, gateway.WithConnectTimeout(gateway.Config{
			Agents: []gateway.Agent{{URL: tc.base + tc.path}}, Roots: []string{t.TempDir()}, Out: t.TempDir()}, 2*time.Second))
		cancel()
		if err == nil {
			g.Close()
			t.Errorf("%s: the gateway started with a URL that is no MCP endpoint", tc.path)
			continue
		}
		msg := err.Error()
		t.Logf("%s: %s", tc.path, msg)
		if !strings.Contains(msg, tc.base+tc.path+" is no MCP endpoint") || !strings.Contains(msg, tc.says) || !strings.Contains(msg, "/mcp") {
			t.Errorf("%s: %q; want it to name the URL, why (%q) and what to give", tc.path, msg, tc.says)
		}
		if took := time.Since(started); took < 2*time.Second || took > 30*time.Second {
			t.Errorf("%s: refused after %v, want after its 2 s window", tc.path, took)
		}
	}
	// The agent's MCP endpoint is taken, and so are its card and its A2A
	// endpoint, as an A2A agent's (a2a_e2e_test.go calls one).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, path := range []string{"/.well-known/agent-card.json", "/a2a"} {
		_, h := newGateway(t, ctx, gateway.Agent{URL: a.URL + path})
		if tools := h.tools(t, ctx); !slices.Contains(tools, "inspect_file") || !slices.Contains(tools, "archive_files") {
			t.Errorf("%s: the host got %v, want the agent's skills inspect_file and archive_files", path, tools)
		}
	}
	g, err := gateway.New(ctx, gateway.WithConnectTimeout(gateway.Config{
		Agents: []gateway.Agent{{URL: a.URL + "/mcp"}}, Roots: []string{t.TempDir()}, Out: t.TempDir()}, 2*time.Second))
	if err != nil {
		t.Fatalf("the agent's MCP endpoint: %v", err)
	}
	g.Close()
}
