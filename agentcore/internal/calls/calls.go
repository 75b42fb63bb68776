// Package calls is the vocabulary agentcore's bindings share: a tool as the
// MCP and A2A bindings, the task engine and the transports see it, a tool
// call's request and result, the hooks a running call reports through, and
// the caller's file scope. It knows nothing of agentcore: agentcore fills
// these from its author's types (ToolDef, Result) and runs the calls
// (Runner), the way a2a-go's a2asrv takes an AgentExecutor it knows
// nothing of.
package calls

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/transfer"
	"github.com/google/jsonschema-go/jsonschema"
)

// AnonymousOwner owns every file when AGENT_AUTH is none: one tenant.
const AnonymousOwner = filehttp.AnonymousOwner

// Tool is a registered tool as the bindings see it.
type Tool struct {
	Name, Title, Description string
	// The MCP annotations.
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	// Long marks a tool whose calls run as tasks where the client takes them.
	Long bool
	// InputTypes and OutputTypes are the MIME types of the files it takes
	// and hands out (nil: any; OutputTypes empty and non-nil: none).
	InputTypes, OutputTypes []string
	// Examples are example requests for the agent card.
	Examples []string
	// View is the MCP Apps view of its results; NoView turns the default
	// file view off; Visibility says who may call it.
	View       string
	NoView     bool
	Visibility []string
	// Scope is an OAuth scope a caller needs beyond tools:call.
	Scope string
	// InputSchema and OutputSchema are its JSON schemas (OutputSchema nil
	// for a tool without typed output); FileParams the JSON paths of its
	// file parameters.
	InputSchema, OutputSchema *jsonschema.Schema
	FileParams                []string
	// ArgsSchema is the schema its arguments are validated against: the
	// published InputSchema, but where a FileAttachment goes (a URI string
	// there, SEP-2631 §5) an anyOf of the seed's object {name, content} and
	// a string; nil where it is InputSchema itself.
	ArgsSchema *jsonschema.Schema
}

// ProducesFiles reports whether the tool may hand out files: unless its
// OutputTypes is an empty, non-nil list.
func (t Tool) ProducesFiles() bool { return t.OutputTypes == nil || len(t.OutputTypes) > 0 }

// Request is a tool call to run.
type Request struct {
	Tool, Owner string
	// RequestID is the id of the request that carried the call, for logs.
	RequestID string
	Args      json.RawMessage
}

// Runner runs the agent's tools: agentcore's Service.
type Runner interface {
	// Tool returns the registered tool called name.
	Tool(name string) (Tool, bool)
	// Tools lists the registered tools in registration order.
	Tools() []Tool
	// Check decodes and validates args as the arguments of the tool name,
	// without running it.
	Check(name string, args json.RawMessage) error
	// Run runs a call under ctx (its hooks, file scope and cancellation);
	// the error is one the caller may see.
	Run(ctx context.Context, r Request) (*Result, error)
}

// Result is what a call returned, whatever the transport renders it as.
type Result struct {
	Text  string
	Data  map[string]any
	Files []transfer.File
	// Stored are the stored outputs, parallel to Files; Images marks
	// those to show as images; Links are the URIs each can be fetched
	// from, by the transports that offer it (the download URL first).
	Stored []fileserve.Meta
	Images []bool
	Links  [][]string
	// Meta is the MCP result's _meta.
	Meta map[string]any
}

// Structured returns the structured content of r: Data plus the files,
// flat for one file and under "files" for several.
func (r *Result) Structured() map[string]any {
	out := make(map[string]any, len(r.Data)+4)
	maps.Copy(out, r.Data)
	switch len(r.Files) {
	case 0:
	case 1:
		f := r.Files[0]
		out["download_url"] = f.DownloadURL
		out["filename"] = f.Filename
		out["mime_type"] = f.MIMEType
		out["size_bytes"] = f.SizeBytes
		out["sha256"] = f.SHA256
		if f.File != nil {
			out["file"] = f.File
		}
	default:
		out["files"] = r.Files
	}
	return out
}

// ProducedLines are the lines naming each produced file for a model that
// has no client middleware: "Tool produced: report.pptx (PowerPoint, 1.0 MB) <url>".
func (r *Result) ProducedLines() []string {
	lines := make([]string, len(r.Files))
	for i, f := range r.Files {
		lines[i] = transfer.ProducedPrefix + filetype.Describe(f.Filename, f.MIMEType, f.SizeBytes) + " " + f.DownloadURL
	}
	return lines
}

// MaxStatus is the most bytes of a task's status message: a short
// summary, the result itself being elsewhere (a tool's text may be the
// whole text of a 12-page scan).
const MaxStatus = 1 << 10

// Summary says how the call of tool ended, for a task's status: the
// tool's text (its first MaxStatus bytes), else what it produced.
func (r *Result) Summary(tool string) string {
	switch n := len(r.Files); {
	case r.Text != "":
		return Truncate(r.Text, MaxStatus-len("…"))
	case n == 1:
		return tool + " produced 1 file"
	case n > 1:
		return fmt.Sprintf("%s produced %d files", tool, n)
	}
	return tool + " completed"
}

// Read reads the stored file m of at most max bytes, to embed it in a
// result (an MCP embedded resource or image, an A2A bytes part).
func Read(ctx context.Context, st fileserve.Store, m fileserve.Meta, max int64) ([]byte, error) {
	obj, _, err := st.Open(ctx, m.Area, m.Owner, m.ID)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	return ReadAllMax(obj, max, m.ID)
}

// ReadAllMax reads r to its end, failing when it holds more than max bytes.
func ReadAllMax(r io.Reader, max int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("file %s grew beyond %d bytes", what, max)
	}
	return data, nil
}

// LinksOf are the URIs the i-th file can be fetched from: its transports'
// links, else its download URL.
func (r *Result) LinksOf(i int) []string {
	if i < len(r.Links) && len(r.Links[i]) > 0 {
		return r.Links[i]
	}
	return []string{r.Files[i].DownloadURL}
}
