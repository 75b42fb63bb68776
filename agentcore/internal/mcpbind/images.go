package mcpbind

import (
	"context"
	"strings"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ImageMaxBytes is the largest image an output marked ShowImage sends as an
// MCP image content block; a larger one is handed out as a link only.
const ImageMaxBytes = 1 << 20

// images are the image content blocks of the outputs marked ShowImage.
func (s *Server) images(ctx context.Context, res *calls.Result) []mcp.Content {
	var out []mcp.Content
	for i, show := range res.Images {
		if !show || i >= len(res.Stored) {
			continue
		}
		m := res.Stored[i]
		if !strings.HasPrefix(m.MIMEType, "image/") || m.Size > ImageMaxBytes {
			s.Log.Debug("output not shown as an image", "name", m.Name, "mime_type", m.MIMEType, "size", m.Size, "max", ImageMaxBytes)
			continue
		}
		data, err := calls.Read(ctx, s.Store, m, ImageMaxBytes)
		if err != nil {
			s.Log.Warn("could not show output as an image", "id", m.ID, "err", err)
			continue
		}
		out = append(out, &mcp.ImageContent{Data: data, MIMEType: m.MIMEType})
	}
	return out
}
