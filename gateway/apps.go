package gateway

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Apps through the gateway: a tool whose agent names a view
// (_meta.ui.resourceUri, a ui:// resource) keeps it, under a name of the
// gateway's (ui://agentura-gateway/<agent>/<the agent's URI without ui://>)
// whose resources/read the gateway answers from the agent, _meta.ui (the
// view's CSP) included, but for its domain (withoutDomain). The results the host gets name the saved copies
// (file:// resource_links, call.go); agentura's file view shows where each
// file was saved and opens it through the host (ui/open-link).

// gatewayViewPrefix starts the URI of an agent's view as the gateway
// serves it.
const gatewayViewPrefix = "ui://agentura-gateway/"

// hostUIMeta is the _meta of the host's tool for the agent's tool t: its
// _meta.ui with the view renamed, registered for the host; nil without one.
func (g *Gateway) hostUIMeta(a *agent, agentName string, t *mcp.Tool) mcp.Meta {
	ui, ok := t.Meta[transfer.MetaUI].(map[string]any)
	if !ok {
		return nil
	}
	out := maps.Clone(ui)
	if uri, ok := ui["resourceUri"].(string); ok && strings.HasPrefix(uri, "ui://") {
		mine := gatewayViewPrefix + agentName + "/" + strings.TrimPrefix(uri, "ui://")
		out["resourceUri"] = mine
		g.server.AddResource(&mcp.Resource{URI: mine, Name: agentName + " view", MIMEType: transfer.AppMIMEType},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return g.readView(ctx, a, uri, mine)
			})
		return mcp.Meta{transfer.MetaUI: out, transfer.MetaUIResourceURI: mine}
	}
	return mcp.Meta{transfer.MetaUI: out}
}

// readView reads the agent's view uri and hands it out as mine.
func (g *Gateway) readView(ctx context.Context, a *agent, uri, mine string) (*mcp.ReadResourceResult, error) {
	s, err := g.session(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("the view %s is the agent %s's, which is away: %w", mine, a.label(), err)
	}
	res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, fmt.Errorf("read the view %s from the agent %s: %w", uri, a.label(), err)
	}
	for _, c := range res.Contents {
		if c.URI == uri {
			c.URI = mine
		}
		c.Meta = withoutDomain(c.Meta)
	}
	return res, nil
}

// withoutDomain is a view's _meta without _meta.ui.domain: the dedicated
// origin the agent declares (AGENT_UI_DOMAIN) is computed for a host that
// connects to the agent itself (Claude's is a hash of the connector URL),
// and a host that takes a value it does not expect shows no view at all.
// The host behind the gateway connected to the gateway.
func withoutDomain(meta mcp.Meta) mcp.Meta {
	ui, ok := meta[transfer.MetaUI].(map[string]any)
	if _, has := ui["domain"]; !ok || !has {
		return meta
	}
	kept := maps.Clone(ui)
	delete(kept, "domain")
	out := maps.Clone(meta)
	out[transfer.MetaUI] = kept
	return out
}
