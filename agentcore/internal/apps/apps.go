// Package apps holds the agent's MCP Apps views (extension
// io.modelcontextprotocol/ui, revision 2026-01-26): a
// host that supports the extension shows a tool's result in the tool's
// view, an HTML page it reads as a ui:// resource and runs in a sandboxed
// iframe under a CSP built from the resource's _meta.ui.csp. Every tool
// that hands out files gets the file view (transfer.FilesViewURI) without a
// line from its author: each produced file with its name, type, size and
// sha256, a download button and a preview. A host that does not support
// the extension ignores _meta.ui and shows the result as before.
//
// The views are embedded in the binary (views/), one self-contained page
// each: no npm, no CDN, no third-party script or font. Their CSP allows the
// agent's public origin alone, for fetches (previews, uploads) and images;
// under a host's restrictive default they still show every file with its
// link.
package apps

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/signing"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed views
var viewFiles embed.FS

// View is an MCP Apps view: an HTML page a host shows a tool's results in
// (agentcore.View is the same).
type View struct {
	// URI names the view; it must start with "ui://", e.g.
	// "ui://myagent/chart". Tools name it in Tool.View.
	URI string
	// Name is a short machine name of the view.
	Name string
	// Title is an optional human title.
	Title string
	// Description says what the view shows.
	Description string
	// HTML is the whole page, one HTML5 document with its scripts and
	// styles inline. It talks to the host with JSON-RPC over postMessage
	// (ui/initialize, ui/notifications/tool-result, ...) and may fetch from
	// the agent's public origin alone (its download URLs).
	HTML string
}

// Views are the views of one agent, served on its MCP server.
type Views struct {
	Config
}

// Config is what the views need of the agent.
type Config struct {
	MCP       *mcp.Server
	PublicURL string
	Signer    *signing.Signer // upload capabilities
	// URLTTL bounds an upload capability's life; MaxUploadBytes is what
	// the view may send.
	URLTTL         time.Duration
	MaxUploadBytes int64
	// Grant places the id of an upload capability in the scope of the
	// caller of ctx (the caller of attach_file); Adopt makes a file the
	// view staged with that capability (its signed File-Url) a reference,
	// its file URI without token, resolved only there. Either may be nil:
	// the view then names files by name alone.
	Grant func(ctx context.Context, id string) error
	Adopt func(ctx context.Context, owner, grant, fileURL string) (string, error)
	// Domain is the _meta.ui.domain every view declares: the dedicated
	// origin a host is asked to show it on, in the host's own form; ""
	// declares none.
	Domain string
}

// New serves agentura's own views (the file view) on c.MCP.
func New(c Config) *Views {
	s := &Views{Config: c}
	s.serveViews()
	return s
}

// Add registers an MCP Apps view, served as a ui:// resource of type
// text/html;profile=mcp-app with the CSP of agentura's own views (the
// agent's public origin for connections and images, nothing else).
func (s *Views) Add(v View) error {
	if !strings.HasPrefix(v.URI, "ui://") {
		return fmt.Errorf("view URI %q must start with ui:// (MCP Apps)", v.URI)
	}
	if _, err := url.Parse(v.URI); err != nil {
		return fmt.Errorf("view URI %q: %w", v.URI, err)
	}
	if v.Name == "" || strings.TrimSpace(v.HTML) == "" {
		return errors.New("a view needs a Name and its HTML")
	}
	meta := s.viewMeta()
	page := v.HTML
	s.MCP.AddResource(&mcp.Resource{
		URI: v.URI, Name: v.Name, Title: v.Title, Description: v.Description,
		MIMEType: transfer.AppMIMEType, Meta: meta,
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: req.Params.URI, MIMEType: transfer.AppMIMEType, Text: page, Meta: meta,
		}}}, nil
	})
	return nil
}

// viewMeta is the _meta of a view resource: a CSP allowing the agent's
// public origin for fetches and static resources, a border, and the
// dedicated origin when one is set (AGENT_UI_DOMAIN).
func (s *Views) viewMeta() mcp.Meta {
	origin := publicOrigin(s.PublicURL)
	ui := map[string]any{
		"csp": map[string]any{
			"connectDomains":  []string{origin},
			"resourceDomains": []string{origin},
		},
		"prefersBorder": true,
	}
	if s.Domain != "" {
		ui["domain"] = s.Domain
	}
	return mcp.Meta{transfer.MetaUI: ui}
}

// publicOrigin is the scheme://host[:port] of a public URL.
func publicOrigin(public string) string {
	u, err := url.Parse(public)
	if err != nil {
		return public
	}
	return u.Scheme + "://" + u.Host
}

// serveViews registers agentura's own views.
func (s *Views) serveViews() {
	if err := s.Add(View{
		URI: transfer.FilesViewURI, Name: "agentura-files", Title: "Files",
		Description: "The files a tool produced: a preview of each, its type, size and sha256, and a download button.",
		HTML:        mustView("files"),
	}); err != nil {
		panic(err) // agentura's own views are well-formed
	}
}

// Page builds the HTML page of a view on agentura's view kit (see
// agentcore.ViewPage).
func Page(title, body, style, script string) string {
	return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html.EscapeString(title) +
		"</title>\n<style>\n" + readView("common.css") + "\n" + inlineSafe(style) + "\n</style>\n</head>\n<body>\n" + body +
		"\n<script>\n" + readView("common.js") + "\n" + inlineSafe(script) + "\n</script>\n</body>\n</html>\n"
}

// closingTag is the end of an inline script or style.
var closingTag = regexp.MustCompile(`(?i)</(script|style)`)

// inlineSafe keeps text inlined in a script or style element from closing
// it early ("<\/script" means the same in a JavaScript string).
func inlineSafe(text string) string { return closingTag.ReplaceAllString(text, `<\/$1`) }

// readView reads an embedded view file.
func readView(f string) string {
	b, err := viewFiles.ReadFile("views/" + f)
	if err != nil {
		panic(fmt.Sprintf("agentcore: embedded view file %s: %v", f, err))
	}
	return string(b)
}

// mustView assembles the page views/<name>.html: its {{style}} and
// {{script}} placeholders take views/common.css, views/common.js and
// views/<name>.js, so every view is one self-contained document.
func mustView(name string) string {
	page := readView(name + ".html")
	page = strings.Replace(page, "{{style}}", readView("common.css"), 1)
	return strings.Replace(page, "{{script}}", readView("common.js")+"\n"+readView(name+".js"), 1)
}

// ToolUI is the _meta.ui of a tool: the view that shows its results (the
// file view for a tool that hands out files, unless its author named
// another or set NoView) and who may call it. Nil when there is nothing to
// say.
func ToolUI(t calls.Tool) map[string]any {
	view := t.View
	if view == "" && t.ProducesFiles() && !t.NoView {
		view = transfer.FilesViewURI
	}
	ui := map[string]any{}
	if view != "" {
		ui["resourceUri"] = view
	}
	if len(t.Visibility) > 0 {
		ui["visibility"] = t.Visibility
	}
	if len(ui) == 0 {
		return nil
	}
	return ui
}
