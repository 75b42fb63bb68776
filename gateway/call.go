package gateway

import (
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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer"
)

// call forwards a host's tool call to its agent: the file names in the
// arguments resolved and sent as the client package sends them, the
// produced files fetched, saved in Out and named in the result. A task the
// agent makes of the call is waited for (tasks.go passes it on instead to
// a host that supports tasks).
func (g *Gateway) call(ctx context.Context, req *mcp.CallToolRequest, r route) (*mcp.CallToolResult, error) {
	res, _, err := g.run(ctx, req, r, false)
	return res, err
}

// run is call; with pass, a task the agent makes is returned, not waited
// for.
func (g *Gateway) run(ctx context.Context, req *mcp.CallToolRequest, r route, pass bool) (*mcp.CallToolResult, *client.Task, error) {
	prog := g.calls.start(ctx, req.Session, req.Params.GetProgressToken())
	defer g.calls.end(prog)
	mw, err := g.middleware(r, prog)
	if err != nil {
		return nil, nil, err
	}
	args, err := mw.RewriteArguments(ctx, r.tool, req.Params.Arguments)
	if err != nil {
		return toolError(fmt.Sprintf("%s: %v. Nothing was sent to the agent.", req.Params.Name, err)), nil, nil
	}
	params := &mcp.CallToolParams{Name: r.tool.Name, Arguments: args, Meta: maps.Clone(r.agent.logMeta)}
	if prog.token != nil {
		params.SetProgressToken(prog.id)
	}
	res, task, err := mw.StartTool(ctx, r.agent.session, params)
	if err != nil {
		return toolError(fmt.Sprintf("%s: the agent %s failed: %s", req.Params.Name, r.agent.name, scrub(err.Error()))), nil, nil
	}
	if task != nil {
		if pass {
			return nil, task, nil
		}
		if res, err = g.waitTask(ctx, mw, r, task); err != nil {
			return toolError(fmt.Sprintf("%s: the agent %s failed: %s", req.Params.Name, r.agent.name, scrub(err.Error()))), nil, nil
		}
	} else {
		mw.Collect(ctx, r.tool.Name, res)
	}
	g.finish(ctx, res, r.tool.Name)
	return res, nil, nil
}

// middleware is the client middleware of one call to r's agent.
func (g *Gateway) middleware(r route, prog *callProgress) (*client.Middleware, error) {
	return client.New(client.Config{
		Registry:         g.reg,
		BaseURL:          r.agent.base,
		Token:            r.agent.cfg.Token,
		InlineMaxBytes:   g.cfg.InlineMaxBytes,
		MaxDownloadBytes: g.cfg.MaxDownloadBytes,
		AllowHosts:       r.agent.cfg.AllowHosts,
		Progress:         prog.transfer,
		Task:             prog.task,
		Logger:           g.log,
		Resolve:          g.resolve,
	})
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
// with a resource_link to the saved copy; pictures and sounds the result
// carries inline are saved the same way; what is left of URLs with tokens,
// data URIs and base64 is scrubbed from text and structured content.
func (g *Gateway) finish(ctx context.Context, res *mcp.CallToolResult, tool string) {
	var lines, links []mcp.Content
	done := map[string]string{} // "Tool produced: X" line → the line with where it is saved
	for _, n := range client.ProducedNames(res) {
		line, link, err := g.save(n)
		if err != nil {
			g.log.Warn("produced file not saved", "name", n, "err", err)
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
			content = append(content, &mcp.TextContent{Text: scrub(t), Meta: x.Meta, Annotations: x.Annotations})
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
	saved, err := transfer.Save(g.out, e.Name, f, 0, 0o644)
	if err != nil {
		return savedLine{}, nil, err
	}
	shown := display(saved.Path)
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

// display is how a saved path is shown: relative to the working directory
// when under it ("agentura-files/report.pdf"), else absolute.
func display(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return p
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
