package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer"
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
	out    string // absolute
	hint   string // what a file position's description says
	server *mcp.Server
	agents []*agent
	calls  *progressRoutes
	// hostTasks are the agents' tasks passed through to hosts (tasks.go).
	hostTasks hostTasks

	refreshing sync.Mutex // one refresh at a time, so the last listing wins
	mu         sync.Mutex
	routes     map[string]route   // the host's tool name → the agent's tool
	saved      map[string]string  // registry name → where it was saved (display form)
	byPath     map[pathKey]string // a file under a root → its registry name
}

// agent is a connected agent.
type agent struct {
	cfg     Agent
	name    string // as used in clashing tool names
	base    string // HTTP base for /uploads and downloads, "" if unknown
	session *mcp.ClientSession
	// logMeta asks for the agent's log messages in each call's _meta
	// (2026-07-28, where logging/setLevel is gone); nil: asked once
	// with logging/setLevel, or not at all.
	logMeta mcp.Meta
}

// route is where a host's tool goes.
type route struct {
	agent *agent
	tool  *mcp.Tool
}

// New connects to every agent of cfg, lists their tools and returns the
// gateway; serve its Server on a transport. Close it when done.
func New(ctx context.Context, cfg Config) (_ *Gateway, err error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	g := &Gateway{cfg: cfg, log: cfg.Logger, routes: map[string]route{}, saved: map[string]string{}, byPath: map[pathKey]string{}, calls: newProgressRoutes()}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	if g.roots, err = openRoots(cfg.Roots); err != nil {
		return nil, err
	}
	out := cfg.Out
	if out == "" {
		out = DefaultOut
	}
	if g.out, err = filepath.Abs(out); err != nil {
		return nil, fmt.Errorf("gateway: --out %s: %w", out, err)
	}
	if g.reg, err = client.NewRegistry("", &client.RegistryOptions{TTL: registryTTL}); err != nil {
		return nil, err
	}
	g.hint = "a file name from this conversation or a path under " + g.roots.String()
	g.server = mcp.NewServer(&mcp.Implementation{Name: "agentura-gateway", Version: "1"}, &mcp.ServerOptions{
		Logger:       g.log,
		Capabilities: serverCapabilities(), // tasks.go
		Instructions: "Name files by their file names (as list_files shows them) or by their paths under " + g.roots.String() +
			"; never paste file contents. Files the tools produce are saved under " + g.out + " and can be named in later calls.",
	})
	for i := range cfg.Agents {
		a, err := g.connect(ctx, cfg.Agents[i])
		if err != nil {
			return nil, err
		}
		g.agents = append(g.agents, a)
	}
	nameAgents(g.agents)
	g.addOwnTools()
	g.serveTasks()
	if err := g.refresh(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// Server is the MCP server to run on a transport (mcp.StdioTransport, or
// mcp.NewStreamableHTTPHandler).
func (g *Gateway) Server() *mcp.Server { return g.server }

// Registry is the gateway's file registry.
func (g *Gateway) Registry() *client.Registry { return g.reg }

// Close ends the agents' sessions and removes the registry's copies (the
// files saved in Out stay).
func (g *Gateway) Close() error {
	var errs []error
	for _, a := range g.agents {
		errs = append(errs, a.session.Close())
	}
	if g.reg != nil {
		errs = append(errs, g.reg.Close())
	}
	if g.roots != nil {
		g.roots.close()
	}
	return errors.Join(errs...)
}

// connect opens a session with one agent.
func (g *Gateway) connect(ctx context.Context, ac Agent) (*agent, error) {
	a := &agent{cfg: ac, base: ac.BaseURL}
	if ac.Token == "" {
		a.cfg.Token = g.cfg.Token
	}
	opts := mcp.ClientOptions{
		Logger:                      g.log,
		ProgressNotificationHandler: g.agentProgress,
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			g.forwardLog(ctx, a, req.Params)
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			// Not from the notification's goroutine: listing needs the connection.
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := g.refresh(ctx); err != nil {
					g.log.Warn("tools not listed again after a change", "agent", a.name, "err", err)
				}
			}()
		},
	}
	var tr mcp.Transport
	what := ac.URL
	if ac.URL != "" {
		u, _ := url.Parse(ac.URL)
		if a.base == "" {
			a.base, _ = client.BaseURLFromEndpoint(ac.URL)
		}
		hc := transfer.WithBearer(nil, a.cfg.Token, u) // the token goes to the agent's origin only
		if len(ac.Headers) > 0 {
			hc = &http.Client{Transport: headerTransport{headers: ac.Headers, next: hc.Transport}}
		}
		tr = &mcp.StreamableClientTransport{Endpoint: ac.URL, HTTPClient: agentTasks(&opts, hc)}
	} else {
		what = strings.Join(ac.Command, " ")
		cmd := exec.Command(ac.Command[0], ac.Command[1:]...)
		cmd.Env = append(os.Environ(), ac.Env...)
		cmd.Stderr = os.Stderr // a host shows a stdio server's stderr in its log
		tr = &mcp.CommandTransport{Command: cmd}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agentura-gateway", Version: "1"}, &opts)
	client.RegisterTaskMethods(c)
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		if strings.Contains(err.Error(), http.StatusText(http.StatusUnauthorized)) {
			return nil, fmt.Errorf("gateway: connect to %s: %w: the agent wants a bearer token (AGENT_AUTH=jwt): give it with --token, $AGENTURA_TOKEN or the agent's token in the configuration file", what, err)
		}
		return nil, fmt.Errorf("gateway: connect to %s: %w", what, err)
	}
	a.session = s
	a.name = ac.Name
	if a.name == "" {
		if ir := s.InitializeResult(); ir != nil && ir.ServerInfo != nil {
			a.name = ir.ServerInfo.Name
		}
	}
	// The agent's log messages at info and above are forwarded to the
	// host: asked for once per session on older revisions, per request on
	// 2026-07-28 (the go-sdk negotiated the newest revision both speak).
	if ir := s.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Logging != nil {
		if ir.ProtocolVersion >= sessionlessRevision {
			a.logMeta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
		} else if err := s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			g.log.Debug("agent refused a logging level", "agent", what, "err", err)
		}
	}
	return a, nil
}

// sessionlessRevision is the first MCP revision without sessions, where a
// client names its log level in each request's _meta.
const sessionlessRevision = "2026-07-28"

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	next := h.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// nameAgents makes the agents' names fit for tool names and distinct.
func nameAgents(agents []*agent) {
	seen := map[string]int{}
	for i, a := range agents {
		n := strings.Trim(unsafeName.ReplaceAllString(a.name, "_"), "_")
		if n == "" {
			n = fmt.Sprintf("agent%d", i+1)
		}
		seen[n]++
		if seen[n] > 1 {
			n = fmt.Sprintf("%s_%d", n, seen[n])
		}
		a.name = n
	}
}

// Own tool names, which an agent's tool of the same name must not hide.
const (
	toolListFiles = "list_files"
	toolAddFile   = "add_file"
)

// namedTool is a tool of the agent at index Agent.
type namedTool struct {
	Agent int
	Tool  *mcp.Tool
}

// toolNames names the tools of each agent for the host: a tool keeps its
// name unless another agent has one of the same name (or the gateway does),
// then it is "<agent>_<tool>". tools[i] are the tools of agents[i]; the
// result maps the host's names to (agent index, tool).
func toolNames(agentNames []string, tools [][]*mcp.Tool) map[string]namedTool {
	owners := map[string]map[int]bool{toolListFiles: {-1: true}, toolAddFile: {-1: true}}
	for i, ts := range tools {
		for _, t := range ts {
			if owners[t.Name] == nil {
				owners[t.Name] = map[int]bool{}
			}
			owners[t.Name][i] = true
		}
	}
	out := map[string]namedTool{}
	for i, ts := range tools {
		for _, t := range ts {
			name := t.Name
			if len(owners[name]) > 1 {
				name = agentNames[i] + "_" + t.Name
			}
			out[name] = namedTool{i, t}
		}
	}
	return out
}

// refresh lists every agent's tools and shows them to the host: added,
// replaced, and removed when gone (the go-sdk tells the host the list
// changed).
func (g *Gateway) refresh(ctx context.Context) error {
	g.refreshing.Lock()
	defer g.refreshing.Unlock()
	names := make([]string, len(g.agents))
	tools := make([][]*mcp.Tool, len(g.agents))
	for i, a := range g.agents {
		names[i] = a.name
		for t, err := range a.session.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("gateway: list the tools of %s: %w", a.name, err)
			}
			tools[i] = append(tools[i], t)
		}
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
		schema, err := client.HostSchema(at.Tool.InputSchema, g.hint)
		if err != nil {
			g.log.Warn("tool left out: its input schema is unreadable", "agent", names[at.Agent], "tool", at.Tool.Name, "err", err)
			continue
		}
		schema["type"] = "object"
		r := route{agent: g.agents[at.Agent], tool: at.Tool}
		routes[n] = r
		host := &mcp.Tool{
			Name:        n,
			Title:       at.Tool.Title,
			Description: at.Tool.Description,
			InputSchema: schema,
			Annotations: at.Tool.Annotations,
			// No output schema: the structured content the host gets has
			// no download URLs, which the agent's schema may require.
		}
		g.server.AddTool(host, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return g.call(ctx, req, r)
		})
	}
	g.routes = routes
	return nil
}
