package agentcore

import (
	"context"

	"github.com/agentura/agentura/agentcore/internal/apps"
	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/transfer"
)

// View is an MCP Apps view: an HTML page a host shows a tool's results in.
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

// AddView registers an MCP Apps view, served as a ui:// resource of type
// text/html;profile=mcp-app with the CSP of agentura's own views (the
// agent's public origin for connections and images, nothing else). Name it
// in Tool.View to show a tool's results in it.
func (s *Service) AddView(v View) error { return s.views.Add(apps.View(v)) }

// ViewPage builds the HTML page of a view on agentura's view kit, the one
// its own views use: the host bridge (app.start, app.on, app.request,
// app.notify, app.openLink; the theme and size handled), the helpers el
// (an element whose text is set as text), httpURL and humanSize, and CSS
// variables that follow the host's theme (--bg, --fg, --line, --accent,
// ...). body is the page's markup; style and script are its own CSS and
// JavaScript, which call app.on(...) for the notifications they need and
// then app.start({name, version}).
func ViewPage(title, body, style, script string) string { return apps.Page(title, body, style, script) }

// AttachToolName is the name of the tool AddAttachTool adds.
const AttachToolName = apps.AttachToolName

// attachInput is the input of attach_file.
type attachInput struct {
	// Note says what to ask the user for; the view shows it.
	Note string `json:"note,omitempty" jsonschema:"what to ask the user for, shown above the drop zone (e.g. the invoice to read)"`
}

// AddAttachTool adds the tool attach_file and its upload view: a host that
// supports MCP Apps shows a drop zone whose files reach the agent by tus,
// and the model receives their names and URLs (usable as any file
// parameter's content). A host without MCP Apps gets a text saying how to
// stage a file instead (POST /uploads).
func (s *Service) AddAttachTool() error {
	if err := s.views.AddUpload(); err != nil {
		return err
	}
	return addTool(s, Tool{
		Name:  AttachToolName,
		Title: "Attach files",
		Description: "Open an upload view where the user drops or picks files of any size; they go straight to this agent, " +
			"and their names and URLs come back to you as context, to pass as the content of a file parameter. " +
			"Use it when the user wants to give you a file you do not have.",
		ReadOnly: true, OutputTypes: []string{}, View: transfer.UploadViewURI,
		scope: callers.ScopeFilesWrite, // the capability uploads, as POST /uploads does
	}, func(_ context.Context, call *Call, in attachInput) (*Result, error) {
		out, err := s.views.Attach(call.Owner, in.Note)
		if err != nil {
			return nil, err
		}
		return &Result{Text: out.Text, Data: out.Data, meta: out.Meta}, nil
	}, nil)
}
