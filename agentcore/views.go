package agentcore

import (
	"context"

	"github.com/agentura/agentura/agentcore/internal/apps"
	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/transfer"
)

// View is an MCP Apps view: an HTML page a host shows a tool's results in.
type View struct {
	URI         string // "ui://" and a name, e.g. "ui://myagent/chart"; tools name it in Tool.View
	Name        string // short machine name
	Title       string // optional human title
	Description string // what the view shows
	HTML        string // the whole page, scripts and styles inline (see ViewPage); it may fetch from the agent alone
}

// AddView registers an MCP Apps view; name it in Tool.View.
func (s *Service) AddView(v View) error { return s.views.Add(apps.View(v)) }

// ViewPage builds a view's page on agentura's view kit (docs/authoring.md).
func ViewPage(title, body, style, script string) string { return apps.Page(title, body, style, script) }

// AttachToolName is the name of the tool AddAttachTool adds.
const AttachToolName = apps.AttachToolName

// attachInput is the input of attach_file.
type attachInput struct {
	// Note says what to ask the user for; the view shows it.
	Note string `json:"note,omitempty" jsonschema:"what to ask the user for, shown above the drop zone (e.g. the invoice to read)"`
}

// AddAttachTool adds attach_file, whose view lets the user upload files
// by drag-and-drop; with AGENT_ATTACH_TOOL=false (Config.NoAttachTool) it
// adds nothing.
func (s *Service) AddAttachTool() error {
	if s.cfg.NoAttachTool {
		return nil
	}
	if err := s.views.AddUpload(); err != nil {
		return err
	}
	return addTool(s, Tool{
		Name:  AttachToolName,
		Title: "Attach files",
		Description: "Open an upload view where the user drops or picks files of any size; they go straight to this agent, " +
			"and each file's name and file URI (mcp-file://…) come back to you as context: pass the URI as the content of a file parameter. " +
			"Use it when the user wants to give you a file you do not have.",
		ReadOnly: true, OutputTypes: []string{}, View: transfer.UploadViewURI,
		scope: callers.ScopeFilesWrite, // the capability uploads, as POST /uploads does
	}, func(ctx context.Context, call *Call, in attachInput) (*Result, error) {
		out, err := s.views.Attach(ctx, call.Owner, in.Note)
		if err != nil {
			return nil, err
		}
		return &Result{Text: out.Text, Data: out.Data, meta: out.Meta}, nil
	}, nil)
}
