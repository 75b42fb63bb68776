package mcpbind

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentura/agentura/agentcore/internal/apps"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddTool serves def as an MCP tool: its schemas (in the 2020-12 dialect),
// its file parameters in _meta for the hosts of agentura and of the
// draft, its view (MCP Apps) and annotations; a call runs through the
// Runner with the request's hooks, scope and cancellation.
func (s *Server) AddTool(def calls.Tool) {
	t := &mcp.Tool{
		Name:        def.Name,
		Title:       def.Title,
		Description: def.Description,
		InputSchema: withDialect(def.InputSchema),
	}
	if len(def.FileParams) > 0 {
		t.Meta = mcp.Meta{
			transfer.MetaFileParams: def.FileParams,
			mcpfile.MetaFileParams:  mcpfile.FileParamNames(def.FileParams),
		}
	}
	if ui := apps.ToolUI(def); ui != nil {
		setMeta(&t.Meta, transfer.MetaUI, ui)
		if uri, ok := ui["resourceUri"]; ok {
			t.Meta[transfer.MetaUIResourceURI] = uri // hosts of early drafts
		}
	}
	if def.OutputSchema != nil {
		t.OutputSchema = withDialect(def.OutputSchema)
	}
	t.Annotations = &mcp.ToolAnnotations{
		Title:           def.Title,
		ReadOnlyHint:    def.ReadOnly,
		DestructiveHint: &def.Destructive,
		IdempotentHint:  def.Idempotent,
		OpenWorldHint:   &def.OpenWorld,
	}
	name, scope := def.Name, def.Scope
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var ti *auth.TokenInfo
		if req.Extra != nil {
			ti = req.Extra.TokenInfo
		}
		if !s.Callers.Permits(ti, scope) {
			out := &mcp.CallToolResult{}
			out.SetError(fmt.Errorf("tool %s needs the scope %s, which the token lacks; sign in again asking for it", name, scope))
			return out, nil
		}
		scope, handle, err := s.callScope(req, readMeta(req))
		if err != nil {
			return nil, err
		}
		var requestID string
		if req.Extra != nil {
			requestID = req.Extra.Header.Get("X-Request-Id")
			var stop func()
			ctx, stop = s.callContext(ctx, req.Extra.Header)
			defer stop()
		}
		ctx = calls.WithFileScope(ctx, scope)
		res, err := s.Runner.Run(calls.WithHooks(ctx, s.mcpCallHooks(ctx, req, name)),
			calls.Request{Tool: name, Owner: ownerOfExtra(req.Extra), RequestID: requestID, Args: req.Params.Arguments})
		var out *mcp.CallToolResult
		if err != nil {
			out = &mcp.CallToolResult{}
			out.SetError(err)
		} else {
			s.Produced(ctx, scope, res.Stored)
			out = s.Render(ctx, res)
		}
		if handle != "" {
			setMeta(&out.Meta, transfer.MetaOwner, handle)
		}
		return out, nil
	})
}

// setMeta sets key of *meta to v, making the map when there is none.
func setMeta(meta *mcp.Meta, key string, v any) {
	if *meta == nil {
		*meta = mcp.Meta{}
	}
	(*meta)[key] = v
}

// ownerOfExtra reads the caller's identity from the request itself (its
// verified bearer token), never from ctx: in a stateful session, ctx belongs
// to the request that created the session.
func ownerOfExtra(extra *mcp.RequestExtra) string {
	if extra != nil && extra.TokenInfo != nil && extra.TokenInfo.UserID != "" {
		return extra.TokenInfo.UserID
	}
	return calls.AnonymousOwner
}

// Render turns a result into MCP content: the tool's text, a line naming
// each produced file (for models without middleware), a resource_link per
// link of each file (its download URL, and what other transports offer),
// and an embedded resource per file up to EmbedMaxBytes.
func (s *Server) Render(ctx context.Context, res *calls.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{StructuredContent: res.Structured()}
	if len(res.Meta) > 0 {
		out.Meta = mcp.Meta(res.Meta)
	}
	if res.Text != "" {
		out.Content = append(out.Content, &mcp.TextContent{Text: res.Text})
	}
	if len(res.Files) > 0 {
		out.Content = append(out.Content, &mcp.TextContent{Text: strings.Join(res.ProducedLines(), "\n")})
	}
	for i, f := range res.Files {
		size := f.SizeBytes
		for _, uri := range res.LinksOf(i) {
			out.Content = append(out.Content, &mcp.ResourceLink{
				URI:      uri,
				Name:     f.Filename,
				MIMEType: f.MIMEType,
				Size:     &size,
				Meta:     mcp.Meta{transfer.MetaSHA256: f.SHA256},
			})
		}
	}
	for i, f := range res.Files {
		if i >= len(res.Stored) || s.EmbedMaxBytes <= 0 || f.SizeBytes > s.EmbedMaxBytes {
			continue
		}
		if e := s.embed(ctx, res.Stored[i], f.DownloadURL); e != nil {
			out.Content = append(out.Content, e)
		}
	}
	out.Content = append(out.Content, s.images(ctx, res)...)
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	return out
}

// embed reads a small stored file into an embedded resource; text (JSON,
// XML, CSV and the like included) stays text when it is valid UTF-8.
func (s *Server) embed(ctx context.Context, m fileserve.Meta, uri string) *mcp.EmbeddedResource {
	data, err := calls.Read(ctx, s.Store, m, s.EmbedMaxBytes)
	if err != nil {
		s.Log.Warn("could not embed output", "id", m.ID, "err", err)
		return nil
	}
	return &mcp.EmbeddedResource{Resource: resourceContents(uri, m.MIMEType, data)}
}
