package client

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
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transferclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Config.
const (
	// DefaultInlineMaxBytes is the largest file sent inline as a data URI;
	// larger files go through the agent's /uploads.
	DefaultInlineMaxBytes = 10 << 20
	// DefaultMaxDownloadBytes caps a produced file the middleware fetches.
	DefaultMaxDownloadBytes = 1 << 30
	// DefaultStallTimeout is how long a download may go without a byte
	// before it is given up.
	DefaultStallTimeout = transferclient.DefaultStallTimeout
	// DefaultMinDownloadRate is the average, in bytes a second, a download
	// must keep from PaceSlack after its first byte on: 1 KiB/s, which
	// any link a person works over beats, and a trickle of a byte a second
	// does not.
	DefaultMinDownloadRate = transferclient.DefaultMinRate
	// PaceSlack is how long a download's bytes may come at any pace before
	// they must average Config.MinDownloadRate.
	PaceSlack = transferclient.PaceSlack
)

// Config configures a Middleware. Registry is required; the rest has
// defaults.
type Config struct {
	// Registry holds the session's files.
	Registry *Registry
	// BaseURL is the agent's HTTP base, where /uploads lies and whose origin
	// downloads may come from: "http://localhost:8001" for an agent whose MCP
	// endpoint is http://localhost:8001/mcp. BaseURLFromEndpoint derives it.
	BaseURL string
	// HTTPClient makes uploads and downloads; nil means a client without a
	// timeout (transfers are bounded by the call's context).
	HTTPClient *http.Client
	// Token is a bearer token for agents with AGENT_AUTH=jwt; it is sent to
	// the agent's origin only (transfer.SameOrigin with BaseURL).
	Token string
	// InlineMaxBytes is the largest file sent as a data URI; 0 means
	// DefaultInlineMaxBytes, a negative value always uploads.
	InlineMaxBytes int64
	// TusMinBytes is the size from which a file is uploaded resumably
	// (tus, at the agent's /uploads/tus/: a dropped connection resumes
	// where it broke); smaller files go in one POST to /uploads. 0 means
	// transferclient.DefaultTusThreshold, a negative value never uses tus.
	TusMinBytes int64
	// MaxDownloadBytes caps each produced file; 0 means DefaultMaxDownloadBytes.
	MaxDownloadBytes int64
	// StallTimeout is how long a download (its answer, then each read of
	// its body) may go without a byte before it fails with ErrStalled: a
	// deadline that moves with progress, so a large file on a slow link
	// arrives and a trickle that stopped does not hold the call forever.
	// 0 means DefaultStallTimeout.
	StallTimeout time.Duration
	// MinDownloadRate is the average, in bytes a second, a download must
	// keep from PaceSlack after its first byte on, or it fails with
	// ErrStalled: a file that trickles (each byte within StallTimeout of
	// the last) would otherwise hold the call for as long as its sender
	// likes, and a host's model waits with it. 0 means
	// DefaultMinDownloadRate, a negative value no minimum.
	MinDownloadRate int64
	// AllowHosts are hosts ("host" or "host:port") besides the agent's own
	// origin that produced files may be fetched from.
	AllowHosts []string
	// Progress, if set, is called as transfers advance (from the goroutine
	// of the call).
	Progress func(Progress)
	// Logger logs at info level how each file went to the agent and why
	// (one line per file), the rest at debug level; nil discards.
	Logger *slog.Logger
	// RefuseLiterals makes a data: URI or an http(s) URL written where a
	// file name goes an error wrapping ErrLiteralFile, and the call is not
	// sent; by default such content goes to the agent as it is. A host whose
	// model writes the arguments sets it: a model pasting bytes or pointing
	// an agent at a URL is what the file specification keeps out. A file
	// URI without its token is a reference, not a literal: it always passes.
	RefuseLiterals bool
	// Tasks declares the MCP Tasks extension on each tools/call (MCP
	// 2026-07-28; the session's transport needs an HTTP client from
	// WithTasks): an agent then answers a long call with a task, which
	// CallTool waits for, polling it, and StartTool returns (tasks.go).
	Tasks bool
	// Task, if set, is told each state of a task the middleware follows
	// (progress, status message), from the goroutine of the call.
	Task func(*Task)
	// Resolve, if set, is asked for a name the registry does not hold: it
	// may register the file (from a folder the host trusts, say) and return
	// its entry, or return an error that says what is missing. Nil means a
	// name must be in the registry.
	Resolve func(ctx context.Context, name string) (Entry, error)
}

// Middleware rewrites tool calls of a go-sdk MCP client: file names in,
// files out. Attach it to a client with Attach before connecting.
type Middleware struct {
	cfg  Config
	base *url.URL
	hc   *http.Client // uploads and downloads; the token goes to base only

	mu      sync.Mutex
	tools   map[string]*mcp.Tool
	owner   string             // the agent's owner handle, carried in _meta (owner.go)
	session *mcp.ClientSession // for the draft's files/* methods (UseSession)
}

// New checks cfg and returns a Middleware.
func New(cfg Config) (*Middleware, error) {
	if cfg.Registry == nil {
		return nil, errors.New("client: Config.Registry is required")
	}
	cfg.InlineMaxBytes = cmp.Or(cfg.InlineMaxBytes, DefaultInlineMaxBytes)
	cfg.TusMinBytes = cmp.Or(cfg.TusMinBytes, transferclient.DefaultTusThreshold)
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	cfg.MinDownloadRate = cmp.Or(cfg.MinDownloadRate, DefaultMinDownloadRate)
	if cfg.MaxDownloadBytes <= 0 {
		cfg.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	m := &Middleware{cfg: cfg, tools: map[string]*mcp.Tool{}}
	if cfg.BaseURL != "" {
		u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("client: BaseURL %q is not an http(s) URL such as http://localhost:8001", cfg.BaseURL)
		}
		m.base = u
	}
	m.hc = transferclient.WithBearer(cfg.HTTPClient, cfg.Token, m.base)
	return m, nil
}

// BaseURLFromEndpoint derives an agent's base URL from its MCP endpoint:
// "http://host:8001/mcp" → "http://host:8001"; a path prefix before /mcp is
// kept.
func BaseURLFromEndpoint(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL of an MCP endpoint such as http://localhost:8001/mcp", endpoint)
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/mcp")
	u.RawQuery, u.Fragment, u.RawPath = "", "", ""
	return u.String(), nil
}

// Attach adds the middleware to c's sending side, and lets c send the
// tasks/* requests of GetTask and CancelTask.
func (m *Middleware) Attach(c *mcp.Client) {
	c.AddSendingMiddleware(m.Sending)
	RegisterTaskMethods(c)
	RegisterFileMethods(c)
}

// UseSession names the session RewriteArguments and Collect send the
// draft MCP file contract's files/authorizeUpload and
// files/authorizeDownload on (whose client RegisterFileMethods prepared);
// calls through the attached middleware use their own session.
func (m *Middleware) UseSession(s *mcp.ClientSession) {
	m.mu.Lock()
	m.session = s
	m.mu.Unlock()
}

func (m *Middleware) currentSession() *mcp.ClientSession {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.session
}

// Registry is the registry the middleware resolves names in and registers
// produced files into.
func (m *Middleware) Registry() *Registry { return m.cfg.Registry }

// Sending is the go-sdk sending middleware: it learns the tools' schemas
// from tools/list, rewrites tools/call on the way out and back, and carries
// the agent's owner handle (owner.go).
func (m *Middleware) Sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		m.carryOwner(req)
		switch method {
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				m.remember(lr.Tools)
			}
			return res, err
		case "tools/call":
			res, err := m.callTool(ctx, req, next)
			if err == nil {
				m.keepOwner(res)
			}
			return res, err
		case "tasks/get", "tasks/cancel":
			declareTasks(req) // the agent asks for it on every tasks/* request
		}
		return next(ctx, method, req)
	}
}

func (m *Middleware) remember(tools []*mcp.Tool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range tools {
		if t != nil {
			m.tools[t.Name] = t
		}
	}
}

// tool returns the definition of the tool called name, listing the
// session's tools once if it has not been seen.
func (m *Middleware) tool(ctx context.Context, session *mcp.ClientSession, name string) (*mcp.Tool, error) {
	m.mu.Lock()
	t := m.tools[name]
	m.mu.Unlock()
	if t != nil || session == nil {
		return t, nil
	}
	for t, err := range session.Tools(ctx, nil) { // through this middleware: remembered
		if err != nil {
			return nil, fmt.Errorf("list the agent's tools to read %s's schema: %w", name, err)
		}
		if t.Name == name {
			return t, nil
		}
	}
	return nil, nil
}

func (m *Middleware) callTool(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	// ClientSession.CallTool sends a *ClientRequest[Params]; accept the
	// precisely typed form too.
	var session *mcp.ClientSession
	var params *mcp.CallToolParams
	var set func(*mcp.CallToolParams)
	switch r := req.(type) {
	case *mcp.ClientRequest[mcp.Params]:
		params, _ = r.Params.(*mcp.CallToolParams)
		session, set = r.Session, func(p *mcp.CallToolParams) { r.Params = p }
	case *mcp.ClientRequest[*mcp.CallToolParams]:
		params = r.Params
		session, set = r.Session, func(p *mcp.CallToolParams) { r.Params = p }
	}
	if params == nil {
		return next(ctx, "tools/call", req)
	}
	name := params.Name
	tool, err := m.tool(ctx, session, name)
	if err != nil {
		return nil, err
	}
	if tool != nil {
		args, err := m.rewriteArguments(ctx, session, tool, params.Arguments)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (the call was not sent)", name, err)
		}
		p := *params
		p.Arguments = args
		set(&p)
	}
	var res mcp.Result
	if m.cfg.Tasks {
		res, err = m.callAsTask(ctx, req, next)
	} else {
		res, err = next(ctx, "tools/call", req)
	}
	if err != nil {
		return res, err
	}
	if tr, ok := res.(*mcp.CallToolResult); ok && tr != nil && !tr.IsError {
		m.collect(ctx, session, name, tr)
	}
	return res, err
}

// RewriteArguments returns args with every registry name in tool's file
// fields replaced by the file: a data URI up to InlineMaxBytes, the signed
// URL of an upload above. A field that declares the draft MCP file
// contract (an x-mcp-file object) gets what its transferModes and maxSize
// allow: a data URI, or the file URI of files/authorizeUpload on the
// session of UseSession. It is what the middleware does before a call,
// exported for hosts that call tools another way.
func (m *Middleware) RewriteArguments(ctx context.Context, tool *mcp.Tool, args any) (any, error) {
	return m.rewriteArguments(ctx, m.currentSession(), tool, args)
}

func (m *Middleware) rewriteArguments(ctx context.Context, session *mcp.ClientSession, tool *mcp.Tool, args any) (any, error) {
	s, err := parseSchema(tool.InputSchema)
	if err != nil {
		return nil, err
	}
	if !s.hasFiles(s.root) {
		return args, nil
	}
	decoded, err := decodeArgs(args)
	if err != nil {
		return nil, err
	}
	send := func(ctx context.Context, key string, f fileField) (string, string, error) {
		return m.send(ctx, session, key, f)
	}
	w := &rewriter{s: s, send: send, refuseLiterals: m.cfg.RefuseLiterals}
	return w.rewriteArgs(ctx, decoded)
}

// decodeArgs turns arguments of any Go type into generic JSON values.
func decodeArgs(args any) (any, error) {
	var raw []byte
	switch v := args.(type) {
	case nil:
		return map[string]any{}, nil
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("arguments are not JSON: %w", err)
		}
		raw = b
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	return out, nil
}

// send turns the registry name key into what goes over the wire: a data
// URI up to InlineMaxBytes, an upload to /uploads above; for a field the
// draft MCP file contract alone declares (x-mcp-file without x-file), what
// the draft allows (sendDraft). A declared maxSize bounds what is sent
// either way; the accept list too for the draft's fields (an agentura
// agent's tool judges the type itself, by content).
func (m *Middleware) send(ctx context.Context, session *mcp.ClientSession, key string, f fileField) (string, string, error) {
	e, err := m.lookup(ctx, key)
	if err != nil {
		return "", "", err
	}
	name := baseName(e.Name)
	if f.decl != nil {
		if err := fits(e, name, *f.decl, !f.xfile); err != nil {
			return "", "", err
		}
		if !f.xfile {
			content, err := m.sendDraft(ctx, session, e, name, *f.decl, f.object)
			return content, name, err
		}
	}
	if m.cfg.InlineMaxBytes >= 0 && e.Size <= m.cfg.InlineMaxBytes {
		uri, err := m.inline(e, name, "at most the inline limit")
		return uri, name, err
	}
	u, err := m.upload(ctx, e, name)
	if errors.Is(err, transferclient.ErrNoUploadEndpoint) {
		// A server that takes files only inline (no /uploads, no tus):
		// inline is the one way left, within its declared maxSize (fits
		// refused a larger file above).
		uri, err := m.inline(e, name, "the agent offers no upload endpoint; inline is the only way it takes files")
		return uri, name, err
	}
	if err != nil {
		return "", "", err
	}
	m.sent(e, "upload", "over the inline limit")
	return u, name, nil
}

// inline returns the data URI of e, named dataName ("" for none), and logs
// that it went inline, and why.
func (m *Middleware) inline(e Entry, dataName, why string) (string, error) {
	f, err := openEntry(e)
	if err != nil {
		return "", err
	}
	defer f.Close()
	uri, err := transfer.DataURI(f, e.MIMEType, dataName, e.Size)
	if err == nil {
		m.sent(e, "inline", why)
	}
	return uri, err
}

// sent logs, one line per file, how a file went to the agent and why.
func (m *Middleware) sent(e Entry, how, why string) {
	m.cfg.Logger.Info("file sent", "name", e.Name, "size", e.Size, "how", how, "why", why)
}

func openEntry(e Entry) (*os.File, error) {
	f, err := os.Open(e.Path)
	if err != nil {
		return nil, fmt.Errorf("open %s from the registry: %w", e.Name, err)
	}
	return f, nil
}
