package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transferclient"
)

// run forwards a host's tool call to its agent: the file names in the
// arguments resolved and sent as the client package sends them, the
// produced files fetched, saved in Out and named in the result. An agent
// that is away is a tool error; a call that provably never reached the
// agent is sent once more after reconnecting (reconnect.go). A task the
// agent makes of the call is waited for, or, with pass, returned (tasks.go
// passes it on so to a host that supports tasks).
func (g *Gateway) run(ctx context.Context, req *mcp.CallToolRequest, r route, pass bool) (*mcp.CallToolResult, *client.Task, error) {
	prog := g.calls.start(ctx, req.Session, req.Params.GetProgressToken())
	defer g.calls.end(prog)
	if p := r.agent.peerOf(); p != nil { // an A2A agent: no MCP session, no MCP task (a2a.go)
		return g.callA2A(ctx, req, r, p, prog), nil, nil
	}
	mw, err := g.middleware(r.agent, prog)
	if err != nil {
		return nil, nil, err
	}
	var (
		res  *mcp.CallToolResult
		task *client.Task
	)
	for try := 0; ; try++ {
		s, err := g.session(ctx, r.agent)
		if err != nil && ctx.Err() != nil {
			return toolError(fmt.Sprintf("%s: cancelled while the gateway connected to the agent %s. Nothing was sent to the agent.", req.Params.Name, r.agent.label())), nil, nil
		}
		if err != nil {
			r.agent.mu.Lock()
			why := cmp.Or(r.agent.down, err) // the connection's failure, rather than a waiter's
			r.agent.mu.Unlock()
			return unreachable(req.Params.Name, r.agent, why), nil, nil
		}
		// Resolved again on a second try: an upload went to the agent
		// that restarted. The session carries the draft's files/* methods.
		mw.UseSession(s)
		args, err := mw.RewriteArguments(ctx, r.tool, req.Params.Arguments)
		if err != nil {
			return toolError(g.argumentError(req.Params.Name, err)), nil, nil
		}
		r.agent.mu.Lock()
		meta := maps.Clone(r.agent.logMeta)
		if r.agent.owner != "" {
			if meta == nil {
				meta = mcp.Meta{}
			}
			meta[transfer.MetaOwner] = r.agent.owner
		}
		r.agent.mu.Unlock()
		params := &mcp.CallToolParams{Name: r.tool.Name, Arguments: args, Meta: meta}
		if prog.token != nil {
			params.SetProgressToken(prog.id)
		}
		probe := &callProbe{http: r.agent.cfg.URL != ""}
		res, task, err = mw.StartTool(context.WithValue(ctx, probeKey{}, probe), s, params)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return toolError(fmt.Sprintf("%s: cancelled before the agent %s answered.", req.Params.Name, r.agent.label())), nil, nil
		}
		if probe.unsent() {
			g.log.Info("the call did not reach the agent; reconnecting", "agent", r.agent.what, "tool", r.tool.Name, "err", err)
			g.lost(r.agent, s, err)
			if try == 0 {
				continue
			}
			return unreachable(req.Params.Name, r.agent, err), nil, nil
		}
		if agentError(err) {
			return toolError(fmt.Sprintf("%s: the agent %s failed: %s", req.Params.Name, r.agent.label(), scrub(err.Error()))), nil, nil
		}
		g.log.Warn("the call broke off", "agent", r.agent.what, "tool", r.tool.Name, "err", err)
		return toolError(fmt.Sprintf("%s: the agent %s stopped answering during the call (%s): the call may or may not have run, and is not repeated. The gateway reconnects by itself; call the tool again if you need its result.",
			req.Params.Name, r.agent.label(), downReason(err))), nil, nil
	}
	if task != nil {
		if pass {
			return nil, task, nil
		}
		var err error
		if res, err = g.waitTask(ctx, mw, r, task); err != nil {
			return toolError(fmt.Sprintf("%s: the agent %s failed: %s", req.Params.Name, r.agent.label(), scrub(err.Error()))), nil, nil
		}
	} else {
		mw.Collect(ctx, r.tool.Name, res)
	}
	g.finish(ctx, res, r.tool.Name)
	// The agent's owner handle is the gateway's to keep, not the host's:
	// a signed token like the URLs scrubbed above.
	if h, _ := res.Meta[transfer.MetaOwner].(string); h != "" {
		r.agent.mu.Lock()
		r.agent.owner = h
		r.agent.mu.Unlock()
	}
	delete(res.Meta, transfer.MetaOwner)
	return res, nil, nil
}

// middleware is the client middleware of one call to agent a.
func (g *Gateway) middleware(a *agent, prog *callProgress) (*client.Middleware, error) {
	a.mu.Lock()
	hc := a.httpClient // nil unless the agent signs in with OAuth (then it carries the token)
	a.mu.Unlock()
	return client.New(client.Config{
		Registry:         g.reg,
		BaseURL:          a.base,
		Token:            a.cfg.Token,
		HTTPClient:       hc,
		InlineMaxBytes:   g.cfg.InlineMaxBytes,
		MaxDownloadBytes: g.cfg.MaxDownloadBytes,
		AllowHosts:       a.cfg.AllowHosts,
		RefuseLiterals:   !g.cfg.AllowFileURIs,
		Progress:         prog.transfer,
		Task:             prog.task,
		Logger:           g.log,
		Resolve:          g.resolve,
	})
}

// unreachable is the tool error of a call that did not reach the agent a.
func unreachable(tool string, a *agent, why error) *mcp.CallToolResult {
	return toolError(fmt.Sprintf("%s: the agent %s is not reachable (%s). The gateway reconnects by itself as soon as it answers; call the tool again then. Nothing was sent to the agent.",
		tool, a.label(), downReason(why)))
}

// codeRejected is the code of the go-sdk's error for a request its
// transport could not deliver or got no answer to (jsonrpc2.ErrRejected,
// internal to the go-sdk): the transport's failure, not the agent's.
const codeRejected = -32005

// agentError reports whether err is the agent's own JSON-RPC error (an
// unknown tool, invalid parameters): the agent answered, its session is
// fine.
func agentError(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code != codeRejected
}

// argumentError is the tool error of arguments that could not be resolved.
func (g *Gateway) argumentError(tool string, err error) string {
	msg := fmt.Sprintf("%s: %v", tool, err)
	if errors.Is(err, client.ErrLiteralFile) {
		msg += fmt.Sprintf(" — a file of this conversation (list_files) or a path under %s; the gateway passes data: URIs and URLs on to the agent only when started with --allow-file-uris", g.roots)
	}
	return msg + ". Nothing was sent to the agent."
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// resolve registers a file the registry does not hold from the roots: a
// path relative to a root, or an absolute path under one
// (client.Config.Resolve). It is registered under its base name, the name
// the agent and the model call it by afterwards; the same unchanged file
// named again by its path is the entry it already has.
func (g *Gateway) resolve(ctx context.Context, name string) (client.Entry, error) {
	if strings.TrimSpace(name) == "" {
		return client.Entry{}, g.missing(name, errEmptyName)
	}
	f, full, err := g.roots.openPath(name)
	if err != nil {
		return client.Entry{}, g.missing(name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return client.Entry{}, g.missing(name, err)
	}
	key := pathKey{full, st.Size(), st.ModTime()}
	g.mu.Lock()
	known, ok := g.byPath[key]
	g.mu.Unlock()
	if ok {
		if e, err := g.reg.Lookup(known); err == nil {
			return e, nil
		}
	}
	e, err := g.reg.Add(ctx, filepath.Base(full), f, client.SourceUpload)
	if err != nil {
		return client.Entry{}, err
	}
	g.mu.Lock()
	g.byPath[key] = e.Name
	g.mu.Unlock()
	return e, nil
}

// errEmptyName is the error of an empty file name.
var errEmptyName = errors.New("empty file name")

// pathKey is a file under a root as it was when it was registered.
type pathKey struct {
	path    string
	size    int64
	modTime time.Time
}

// missing is the error of a name that is neither a registry name nor a
// file under the roots.
func (g *Gateway) missing(name string, err error) error {
	known := g.reg.Names()
	list := "none yet"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	if errors.Is(err, errEmptyName) {
		return fmt.Errorf("no file named (the name is empty): give a file of this conversation (%s) or a path under %s", list, g.roots)
	}
	if errors.Is(err, errOutside) {
		return fmt.Errorf("file %q refused: it is not under the gateway's roots (%s); files of this conversation: %s", name, g.roots, list)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file %q not found: it is not a file of this conversation (%s) nor a path under %s; names must match exactly (list_files shows them)", name, list, g.roots)
	}
	return fmt.Errorf("file %q: %v; files of this conversation: %s", name, err, list)
}

// finish makes a result fit for the host: each produced file (which
// client.Collect registered) is saved in Out and named with where it lies,
// with a resource_link to the saved copy (or with why it could not be); pictures and sounds the result
// carries inline are saved the same way; what is left of URLs with tokens,
// data URIs and base64 is scrubbed from text, structured content and
// _meta, and the blocks as the agent sent them that the client kept under
// _meta (transfer.MetaContent) are dropped.
func (g *Gateway) finish(ctx context.Context, res *mcp.CallToolResult, tool string) {
	var lines, links []mcp.Content
	done := map[string]string{} // "Tool produced: X" line → the line with where it is saved
	for _, n := range client.ProducedNames(res) {
		line, link, err := g.save(n)
		if err != nil {
			g.log.Warn("produced file not saved", "name", n, "err", err)
			if e, lerr := g.reg.Lookup(n); lerr == nil {
				// The model and the user learn that there is no copy in --out, and why.
				old := transfer.ProducedPrefix + e.Describe()
				done[old] = old + " — not saved in --out: " + err.Error()
			}
			continue
		}
		done[line.old] = line.new
		links = append(links, link)
	}
	var content []mcp.Content
	for i, c := range res.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			t := x.Text
			for old, nw := range done {
				t = strings.ReplaceAll(t, old, nw)
			}
			content = append(content, &mcp.TextContent{Text: scrub(t), Meta: hostMeta(x.Meta), Annotations: x.Annotations})
		case *mcp.ImageContent:
			lines, links = g.saveInline(ctx, lines, links, x.Data, x.MIMEType, fmt.Sprintf("%s-image-%d", tool, i+1), tool)
		case *mcp.AudioContent:
			lines, links = g.saveInline(ctx, lines, links, x.Data, x.MIMEType, fmt.Sprintf("%s-audio-%d", tool, i+1), tool)
		case *mcp.ResourceLink, *mcp.EmbeddedResource:
			// Collect took every file it could; a leftover carries a URL or bytes.
		default:
			content = append(content, c)
		}
	}
	res.Content = append(append(content, lines...), links...)
	res.StructuredContent = scrubValue(res.StructuredContent)
	delete(res.Meta, transfer.MetaFailed) // the reasons name URLs; the text says what failed
	res.Meta = hostMeta(res.Meta)
}

// hostMeta is a _meta fit for the host: without the block as the agent
// sent it, which the client keeps under transfer.MetaContent when it
// rewrites a block of a type it cannot read (its base64, its signed URLs),
// and the rest scrubbed.
func hostMeta(m mcp.Meta) mcp.Meta {
	delete(m, transfer.MetaContent)
	scrubValue(map[string]any(m))
	return m
}

// savedLine is a "Tool produced" line before and after naming the saved copy.
type savedLine struct{ old, new string }

// save copies the registry file n into Out and returns its line and link.
func (g *Gateway) save(n string) (savedLine, mcp.Content, error) {
	e, err := g.reg.Lookup(n)
	if err != nil {
		return savedLine{}, nil, err
	}
	f, err := os.Open(e.Path)
	if err != nil {
		return savedLine{}, nil, err
	}
	defer f.Close()
	dir, err := g.out.folder()
	if err != nil {
		return savedLine{}, nil, err
	}
	saved, err := transferclient.Save(dir, e.Name, f, 0, 0o644)
	if err != nil {
		return savedLine{}, nil, err
	}
	if saved.Name != e.Name {
		g.log.Warn("a produced file was saved under another name than the conversation's: something else wrote into this run's folder", "name", e.Name, "saved", saved.Path)
	}
	shown := saved.Path // absolute: right whatever folder the host started the gateway in
	g.mu.Lock()
	g.saved[e.Name] = shown
	g.mu.Unlock()
	old := transfer.ProducedPrefix + e.Describe()
	size := e.Size
	link := &mcp.ResourceLink{URI: fileURI(saved.Path), Name: path.Base(saved.Name), MIMEType: e.MIMEType, Size: &size}
	return savedLine{old: old, new: old + " — saved as " + shown}, link, nil
}

// saveInline registers and saves a picture or sound a result carried
// inline, so that the host gets a line and a link rather than the bytes.
func (g *Gateway) saveInline(ctx context.Context, lines, links []mcp.Content, data []byte, mimeType, stem, tool string) ([]mcp.Content, []mcp.Content) {
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		ext = exts[0]
	}
	e, err := g.reg.Add(ctx, stem+ext, strings.NewReader(string(data)), client.ToolSource(tool))
	if err != nil {
		g.log.Warn("inline content not saved", "tool", tool, "err", err)
		return append(lines, &mcp.TextContent{Text: fmt.Sprintf("%s%s content that could not be saved", transfer.ProducedPrefix, mimeType)}), links
	}
	l, link, err := g.save(e.Name)
	if err != nil {
		g.log.Warn("inline content not saved", "tool", tool, "err", err)
		return append(lines, &mcp.TextContent{Text: transfer.ProducedPrefix + e.Describe()}), links
	}
	return append(lines, &mcp.TextContent{Text: l.new}), append(links, link)
}

// fileURI is the file:// URI of an absolute path.
func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

var (
	urlPattern    = regexp.MustCompile(`(?i)\bhttps?://[^\s"'<>]+`)
	dataPattern   = regexp.MustCompile(`(?i)\bdata:[a-z0-9.+/-]*(;[a-z0-9.+=-]+)*,[^\s"'<>]*`)
	base64Pattern = regexp.MustCompile(`[A-Za-z0-9+/]{256,}={0,2}`)
)

// scrub takes out of text what must not reach the host's model: data URIs
// and long base64 runs (bytes), and the query (where signed URLs carry
// their token) and user information of URLs.
func scrub(text string) string {
	text = dataPattern.ReplaceAllString(text, "[data URI removed]")
	text = base64Pattern.ReplaceAllString(text, "[base64 removed]")
	return urlPattern.ReplaceAllStringFunc(text, transfer.Redact)
}

// scrubValue is scrub over every string of a JSON value.
func scrubValue(v any) any {
	switch x := v.(type) {
	case string:
		return scrub(x)
	case map[string]any:
		for k, c := range x {
			x[k] = scrubValue(c)
		}
	case []any:
		for i, c := range x {
			x[i] = scrubValue(c)
		}
	}
	return v
}
