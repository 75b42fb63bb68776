package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/agentura/agentura/transferclient"
)

// registryTTL is how long the gateway's registry keeps a file: the length
// of a working day's conversation; the saved copies in Out stay.
const registryTTL = 24 * time.Hour

// Gateway is an MCP server whose tools are the tools of the agents it
// fronts, with the host side of the file specification done for the host:
// names in, files out.
type Gateway struct {
	cfg    Config
	log    *slog.Logger
	reg    *client.Registry
	roots  *roots
	out    *outFolder
	hint   string // what a file position's description says
	server *mcp.Server
	agents []*agent
	calls  *progressRoutes
	// hostTasks are the agents' tasks passed through to hosts (tasks.go).
	hostTasks hostTasks

	// bg bounds what runs in the background (reconnections, listings);
	// Close cancels it and waits for wg.
	bg      context.Context
	stopBG  context.CancelFunc
	bgMu    sync.Mutex // orders background's Add before Close's Wait
	wg      sync.WaitGroup
	started atomic.Bool // New has listed the tools: a reconnection lists them again

	refreshing sync.Mutex // one refresh at a time, so the last listing wins
	mu         sync.Mutex
	routes     map[string]route   // the host's tool name → the agent's tool
	saved      map[string]string  // registry name → where it was saved (display form)
	byPath     map[pathKey]string // a file under a root → its registry name
}

// agent is an agent the gateway fronts, connected or not (reconnect.go).
type agent struct {
	cfg  Agent
	what string // its URL or command, for logs
	base string // HTTP base for /uploads and downloads, "" if unknown

	mu sync.Mutex
	// given is its name from the configuration, else the one it gave
	// itself; name is that made fit for tool names and distinct (refresh).
	given, name string
	session     *mcp.ClientSession // nil while it has none
	httpClient  *http.Client       // uploads and downloads with the agent's OAuth token (auth.go); nil: cfg.Token
	oauth       *client.OAuth      // its sign-in, made once (auth.go); nil without OAuth
	// logMeta asks for the agent's log messages in each call's _meta
	// (2026-07-28, where logging/setLevel is gone); nil: asked once
	// with logging/setLevel, or not at all.
	logMeta mcp.Meta
	// owner is the owner handle the agent answered last
	// (transfer.MetaOwner, an anonymous caller without a session), sent
	// back with each call so that the gateway's calls share one scope:
	// the files it produced, and the references its upload view named.
	owner string
	// peer is the A2A side of an A2A agent (a2a.go), which never has a
	// session; nil for an MCP agent.
	peer     *a2aPeer
	tools    []*mcp.Tool // as last listed; kept while the agent is away
	down     error       // why the last attempt to connect failed
	dial     *dialing    // the attempt under way
	retrying bool        // the background is trying to reconnect
}

// label is the agent's name for messages.
func (a *agent) label() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.name != "" {
		return a.name
	}
	return a.what
}

// route is where a host's tool goes.
type route struct {
	agent     *agent
	agentName string // the agent's name when the host was given the tool
	tool      *mcp.Tool
	desc      string // the description the host was given
}

// New connects to the agents of cfg, lists their tools and returns the
// gateway; serve its Server on a transport. Close it when done. An agent
// that does not answer within connectTimeout does not stop it: it is
// logged, tried again in the background, and its tools are shown to the
// host once it answers.
func New(ctx context.Context, cfg Config) (_ *Gateway, err error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	g := &Gateway{cfg: cfg, log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)), routes: map[string]route{}, saved: map[string]string{}, byPath: map[pathKey]string{}, calls: &progressRoutes{calls: map[string]*callProgress{}}}
	g.bg, g.stopBG = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	if g.roots, err = openRoots(cfg.Roots); err != nil {
		return nil, err
	}
	if g.out, err = newOutFolder(cmp.Or(cfg.Out, DefaultOut), time.Now()); err != nil {
		return nil, err
	}
	if g.reg, err = client.NewRegistry("", &client.RegistryOptions{TTL: registryTTL}); err != nil {
		return nil, err
	}
	g.hint = "a file name from this conversation or a path under " + g.roots.String()
	g.server = mcp.NewServer(&mcp.Implementation{Name: "agentura-gateway", Version: "1"}, &mcp.ServerOptions{
		Logger:       g.log,
		Capabilities: serverCapabilities(), // tasks.go
		Instructions: "Name files by their file names (as list_files shows them) or by their paths under " + g.roots.String() +
			"; never paste file contents. Files the tools produce are saved in a folder of this conversation under " + g.out.parent +
			" under the names you know them by, and can be named in later calls.",
	})
	for i := range cfg.Agents {
		g.agents = append(g.agents, newAgent(cfg.Agents[i], cfg.Token))
	}
	g.addOwnTools()
	g.serveTasks()
	// Outermost: each request of the host is a span continuing the trace
	// its params._meta carries, and the agents' calls are its children.
	g.server.AddReceivingMiddleware(mcptrace.Server)
	// Every agent at once: one that does not answer holds up no other.
	var wg sync.WaitGroup
	refused := make([]error, len(g.agents))
	for i, a := range g.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refused[i] = g.firstSession(ctx, a) // a failure is logged and tried again in the background
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(refused...); err != nil {
		return nil, err
	}
	// From here an agent that answers late has its tools listed by itself.
	g.started.Store(true)
	if err := g.refresh(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// newAgent is the agent of ac, not yet connected.
func newAgent(ac Agent, token string) *agent {
	a := &agent{cfg: ac, base: ac.BaseURL, given: ac.Name, what: ac.URL}
	a.cfg.Token = cmp.Or(ac.Token, token)
	if ac.URL == "" {
		a.what = strings.Join(ac.Command, " ")
	} else if a2aURL(ac.URL) { // its card or A2A endpoint (a2a.go)
		a.peer = &a2aPeer{url: ac.URL}
	} else if a.base == "" {
		a.base, _ = client.BaseURLFromEndpoint(ac.URL)
	}
	return a
}

// Server is the MCP server to run on a transport (mcp.StdioTransport, or
// over HTTP Handler).
func (g *Gateway) Server() *mcp.Server { return g.server }

// Handler serves the gateway's MCP server over streamable HTTP, each
// request's JSON-RPC id kept for its span (mcptrace.RequestIDs).
func (g *Gateway) Handler() http.Handler {
	return mcptrace.RequestIDs(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server }, nil))
}

// Registry is the gateway's file registry.
func (g *Gateway) Registry() *client.Registry { return g.reg }

// Close ends the agents' sessions and removes the registry's copies (the
// files saved in Out stay).
func (g *Gateway) Close() error {
	g.bgMu.Lock()
	g.stopBG()
	g.bgMu.Unlock()
	var errs []error
	for _, a := range g.agents {
		a.mu.Lock()
		s := a.session
		a.session = nil
		if a.oauth != nil {
			a.oauth.Close() // a sign-in under way stops waiting for the browser
		}
		a.mu.Unlock()
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	g.wg.Wait()
	if g.reg != nil {
		errs = append(errs, g.reg.Close())
	}
	if g.roots != nil {
		g.roots.close()
	}
	return errors.Join(errs...)
}

// connect opens a session with the agent a: a new connection (for a stdio
// agent, a new process) each time.
func (g *Gateway) connect(ctx context.Context, a *agent) (*mcp.ClientSession, error) {
	ac := a.cfg
	opts := mcp.ClientOptions{
		Logger:                      g.log,
		ProgressNotificationHandler: g.agentProgress,
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			g.forwardLog(ctx, a, req.Params)
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			// Not from the notification's goroutine: listing needs the connection.
			g.background(func() { g.refreshLogged("tools not listed again after a change", a) })
		},
	}
	// The session whose listen stream ended is dropped: without it the
	// agent's list changes no longer arrive, and an agent that went away is
	// found. The session is known only once Connect has returned.
	var watched atomic.Pointer[mcp.ClientSession]
	listenEnded := func() {
		if s := watched.Load(); s != nil {
			g.lost(a, s, fmt.Errorf("its subscriptions/listen stream ended"))
		}
	}
	var opening openingAnswer // what the agent answered the requests opening the session
	var tr mcp.Transport
	if ac.URL != "" {
		u, _ := url.Parse(ac.URL)
		hc := transferclient.WithBearer(nil, a.cfg.Token, u) // the token goes to the agent's origin only
		var next http.RoundTripper = hc.Transport
		if len(ac.Headers) > 0 {
			next = headerTransport{headers: ac.Headers, next: next}
		}
		oauth, _, err := g.signIn(a, u) // auth.go
		if err != nil {
			return nil, fmt.Errorf("gateway: sign in to %s: %w", ac.URL, err)
		}
		hc = &http.Client{Transport: &watchTransport{next: next, listenEnded: listenEnded, opening: &opening}}
		// Tasks (tasks.go): the extension declared on every request, the
		// task read from answers, tasks/get and tasks/cancel sendable.
		opts.Capabilities = client.TaskCapabilities(opts.Capabilities)
		tr = &mcp.StreamableClientTransport{Endpoint: ac.URL, HTTPClient: client.WithTasks(hc), OAuthHandler: oauth}
		tr = client.LimitMessages(tr, g.cfg.MaxMessageBytes) // an answer too large for one message fails naming the agent
	} else {
		cmd := exec.Command(ac.Command[0], ac.Command[1:]...)
		cmd.Env = append(os.Environ(), ac.Env...)
		cmd.Stderr = os.Stderr // a host shows a stdio server's stderr in its log
		// Content blocks the go-sdk cannot decode are rewritten (over
		// HTTP, client.WithTasks' client does it).
		tr = client.ReadableTransport(client.LimitMessages(&mcp.CommandTransport{Command: cmd}, g.cfg.MaxMessageBytes))
	}
	var sopts *mcp.ClientSessionOptions
	if ac.ProtocolVersion != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: ac.ProtocolVersion}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agentura-gateway", Version: "1"}, &opts)
	client.RegisterTaskMethods(c)
	client.RegisterFileMethods(c) // the draft MCP file contract's files/* (client/mcpfile.go)
	client.Trace(c)               // the agent's spans join the host's trace (params._meta)
	s, err := c.Connect(ctx, tr, sopts)
	if err != nil {
		if strings.Contains(err.Error(), http.StatusText(http.StatusUnauthorized)) {
			return nil, fmt.Errorf("gateway: connect to %s: %w: the agent wants a bearer token: give it with --token, $AGENTURA_TOKEN or the agent's token in the configuration file (AGENT_AUTH=jwt), or sign in with --oauth-client-id (AGENT_AUTH=oauth)", a.what, err)
		}
		if why := opening.notMCP(err); why != "" {
			if g.probeCard(ctx, a) { // an A2A agent's base (a2a.go)
				return nil, errIsA2A
			}
			return nil, &notMCPError{url: a.what, why: why, err: err}
		}
		return nil, fmt.Errorf("gateway: connect to %s: %w", a.what, err)
	}
	watched.Store(s)
	var logMeta mcp.Meta
	// The agent's log messages at info and above are forwarded to the
	// host: asked for once per session on older revisions, per request on
	// 2026-07-28 (the go-sdk negotiated the newest revision both speak).
	if ir := s.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Logging != nil {
		if ir.ProtocolVersion >= sessionlessRevision {
			logMeta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
		} else if err := s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			g.log.Debug("agent refused a logging level", "agent", a.what, "err", err)
		}
	}
	a.mu.Lock()
	if ac.Name == "" {
		if ir := s.InitializeResult(); ir != nil && ir.ServerInfo != nil {
			a.given = ir.ServerInfo.Name
		}
	}
	a.logMeta = logMeta
	a.mu.Unlock()
	return s, nil
}

// sessionlessRevision is the first MCP revision without sessions, where a
// client names its log level in each request's _meta.
const sessionlessRevision = "2026-07-28"

// headerTransport adds fixed headers to every request, or, with host set,
// to the requests to that host alone.
type headerTransport struct {
	headers map[string]string
	host    string // "host:port" of the agent; "" means every request
	next    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.host == "" || strings.EqualFold(r.URL.Host, h.host) {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return cmp.Or(h.next, http.DefaultTransport).RoundTrip(r)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// nameAgents makes the agents' names fit for tool names and distinct: the
// characters a tool name cannot hold become "_", an agent without a name
// is "agent<N>" (its place in the configuration), and a name already taken
// by an agent listed before gets "_2", "_3", ...
func nameAgents(given []string) []string {
	seen := map[string]int{}
	names := make([]string, len(given))
	for i, g := range given {
		n := cmp.Or(strings.Trim(unsafeName.ReplaceAllString(g, "_"), "_"), fmt.Sprintf("agent%d", i+1))
		seen[n]++
		if seen[n] > 1 {
			n = fmt.Sprintf("%s_%d", n, seen[n])
		}
		names[i] = n
	}
	return names
}

// Own tool names, which an agent's tool of the same name must not hide.
const (
	toolListFiles = "list_files"
	toolAddFile   = "add_file"
)

// ownAgent stands for the gateway itself among the owners of a tool name.
const ownAgent = -1

// namedTool is a tool of the agent at index Agent.
type namedTool struct {
	Agent int
	Tool  *mcp.Tool
	// Others are the other agents (ownAgent: the gateway) with a tool of
	// the same name, when the name clashes.
	Others []int
}

// toolNames names the tools of each agent for the host: a tool keeps its
// name unless another agent has one of the same name (or the gateway does),
// then it is "<agent>_<tool>". tools[i] are the tools of agents[i]; the
// result maps the host's names to (agent index, tool).
func toolNames(agentNames []string, tools [][]*mcp.Tool) map[string]namedTool {
	owners := map[string][]int{toolListFiles: {ownAgent}, toolAddFile: {ownAgent}}
	for i, ts := range tools {
		for _, t := range ts {
			if !slices.Contains(owners[t.Name], i) {
				owners[t.Name] = append(owners[t.Name], i)
			}
		}
	}
	out := map[string]namedTool{}
	for i, ts := range tools {
		for _, t := range ts {
			name := t.Name
			nt := namedTool{Agent: i, Tool: t}
			if len(owners[name]) > 1 {
				name = agentNames[i] + "_" + t.Name
				nt.Others = slices.DeleteFunc(slices.Clone(owners[t.Name]), func(o int) bool { return o == i })
			}
			out[name] = nt
		}
	}
	return out
}

// clashNote is what the description of a tool renamed for a clash adds: the
// agent it belongs to, and who else has a tool of that name.
func clashNote(names []string, nt namedTool) string {
	var others []string
	for _, o := range nt.Others {
		if o == ownAgent {
			others = append(others, "the gateway")
		} else {
			others = append(others, "agent "+names[o])
		}
	}
	return fmt.Sprintf("(The tool %s of agent %s; %s has a tool of the same name.)", nt.Tool.Name, names[nt.Agent], strings.Join(others, " and "))
}

// listTools lists the tools of the agent a, trying once more after
// reconnecting when it fails (tools/list changes nothing). An agent without
// a session is not dialled: its last listing is kept.
func (g *Gateway) listTools(ctx context.Context, a *agent) ([]*mcp.Tool, error) {
	if p := a.peerOf(); p != nil {
		return g.a2aTools(ctx, a, p)
	}
	s := a.live()
	if s == nil {
		return nil, errNoSession
	}
	var err error
	for try := 0; try < 2; try++ {
		var tools []*mcp.Tool
		for t, e := range s.Tools(ctx, nil) {
			if e != nil {
				err = e
				break
			}
			tools = append(tools, t)
		}
		if err == nil {
			return tools, nil
		}
		// The agent's own error (an answer over the cap is one): its
		// session is fine, and a new one would be answered the same.
		if ctx.Err() != nil || try == 1 || agentError(err) {
			break
		}
		g.lost(a, s, err)
		if s, err = g.session(ctx, a); err != nil {
			break
		}
	}
	return nil, err
}

// sameTool reports whether a and b, two listings of an agent's tool, say
// the same: every listing makes new values, so pointers do not tell.
func sameTool(a, b *mcp.Tool) bool {
	if a == b {
		return true
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// errNoSession is listTools' error for an agent that has no session.
var errNoSession = errors.New("no session")

// refresh lists the tools of every agent that has a session and shows the
// tools of all to the host: added, replaced, and removed when gone (the
// go-sdk tells the host the list changed). An agent that cannot be listed
// keeps the tools it had.
func (g *Gateway) refresh(ctx context.Context) error {
	g.refreshing.Lock()
	defer g.refreshing.Unlock()
	for _, a := range g.agents {
		tools, err := g.listTools(ctx, a)
		switch {
		case err == nil:
			a.mu.Lock()
			a.tools = tools
			a.mu.Unlock()
		case errors.Is(err, errNoSession):
		default:
			g.log.Warn("tools not listed; the last listing is kept", "agent", a.label(), "err", err)
		}
	}
	given := make([]string, len(g.agents))
	tools := make([][]*mcp.Tool, len(g.agents))
	for i, a := range g.agents {
		a.mu.Lock()
		given[i], tools[i] = a.given, a.tools
		a.mu.Unlock()
	}
	names := nameAgents(given)
	for i, a := range g.agents {
		a.mu.Lock()
		a.name = names[i]
		a.mu.Unlock()
	}
	named := toolNames(names, tools)
	g.mu.Lock()
	defer g.mu.Unlock()
	var gone []string
	for n := range g.routes {
		if _, ok := named[n]; !ok {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		g.server.RemoveTools(gone...)
	}
	routes := map[string]route{}
	for n, at := range named {
		desc := at.Tool.Description
		if len(at.Others) > 0 {
			desc = strings.TrimSpace(desc + "\n\n" + clashNote(names, at))
		}
		if old, ok := g.routes[n]; ok && old.agentName == names[at.Agent] && old.desc == desc && sameTool(old.tool, at.Tool) {
			// Unchanged, if listed anew (a reconnection, an agent's
			// restart): not added again, so the host is told nothing.
			routes[n] = old
			continue
		}
		schema, err := client.HostSchema(at.Tool.InputSchema, g.hint)
		if err != nil {
			g.log.Warn("tool left out: its input schema is unreadable", "agent", names[at.Agent], "tool", at.Tool.Name, "err", err)
			continue
		}
		schema["type"] = "object"
		r := route{agent: g.agents[at.Agent], agentName: names[at.Agent], tool: at.Tool, desc: desc}
		routes[n] = r
		host := &mcp.Tool{
			Name:        n,
			Title:       at.Tool.Title,
			Description: desc,
			InputSchema: schema,
			Annotations: at.Tool.Annotations,
			// No output schema: the structured content the host gets has
			// no download URLs, which the agent's schema may require.
			Meta: g.hostUIMeta(g.agents[at.Agent], names[at.Agent], at.Tool), // MCP Apps (apps.go)
		}
		g.server.AddTool(host, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, _, err := g.run(ctx, req, r, false)
			return res, err
		})
	}
	g.routes = routes
	return nil
}
