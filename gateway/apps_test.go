package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/gateway"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool's MCP Apps view reaches the host through the gateway: the tool
// keeps its _meta.ui under a gateway URI, whose resources/read is the
// agent's view, its _meta.ui (the CSP) included but not the agent's
// _meta.ui.domain, which names a connector to the agent, not the
// gateway's; the gateway declares the extension.
func TestAppsViewsForwarded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a := newFakeAgent(t, "viewer", true)
	fileTools(a)
	const view = "ui://agentura/files"
	csp := map[string]any{"connectDomains": []any{"http://" + a.addr}}
	a.server.AddTool(&mcp.Tool{Name: "shown", InputSchema: map[string]any{"type": "object"},
		Meta: mcp.Meta{transfer.MetaUI: map[string]any{"resourceUri": view, "visibility": []any{"model", "app"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	a.server.AddResource(&mcp.Resource{URI: view, Name: "files", MIMEType: transfer.AppMIMEType},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: view, MIMEType: transfer.AppMIMEType,
				Text: "<!DOCTYPE html><title>files</title>", Meta: mcp.Meta{transfer.MetaUI: map[string]any{"csp": csp, "domain": "0123456789abcdef0123456789abcdef.claudemcpcontent.com"}}}}}, nil
		})
	a.start()
	_, h := newGateway(t, ctx, gateway.Agent{URL: a.url()})
	if _, ok := h.session.InitializeResult().Capabilities.Extensions[transfer.AppsExtension]; !ok {
		t.Errorf("the gateway does not declare %s", transfer.AppsExtension)
	}
	var uri string
	for tool, err := range h.session.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		ui, _ := tool.Meta[transfer.MetaUI].(map[string]any)
		switch tool.Name {
		case "shown":
			uri, _ = ui["resourceUri"].(string)
			if !strings.HasPrefix(uri, "ui://agentura-gateway/viewer/") || tool.Meta[transfer.MetaUIResourceURI] != uri || len(ui["visibility"].([]any)) != 2 {
				t.Errorf("tool shown: _meta %v; want the view under ui://agentura-gateway/viewer/, visibility kept", tool.Meta)
			}
		case "take", "produce":
			if ui != nil {
				t.Errorf("tool %s: _meta.ui %v, want none (the agent named no view)", tool.Name, ui)
			}
		}
	}
	rr, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s through the gateway: %v", uri, err)
	}
	c := rr.Contents[0]
	ui, _ := c.Meta[transfer.MetaUI].(map[string]any)
	if c.URI != uri || c.MIMEType != transfer.AppMIMEType || !strings.Contains(c.Text, "<title>files</title>") || ui["csp"] == nil {
		t.Errorf("read %s: %+v; want the agent's page and its _meta.ui.csp", uri, c)
	}
	if d, ok := ui["domain"]; ok {
		t.Errorf("read %s: _meta.ui.domain %v passed on; the agent's domain is no host's behind the gateway", uri, d)
	}
}
