package agentcore

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Apps declarations: a tool that hands out files names the file view
// (new and deprecated keys), a tool without files names none, an author's
// view and NoView are honoured, the view reads as text/html;profile=mcp-app
// with a CSP of the agent's origin alone, views stay out of resources/list,
// and the server declares the extension.
func TestAppsDeclarations(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	noop := func(ctx context.Context, call *Call, in countInput) (*Result, error) { return TextResult("ok"), nil }
	AddTool(svc, Tool{Name: "files"}, noop)
	AddTool(svc, Tool{Name: "text_only", OutputTypes: []string{}}, noop)
	AddTool(svc, Tool{Name: "no_view", NoView: true}, noop)
	AddTool(svc, Tool{Name: "chart", View: "ui://test/chart", Visibility: []string{"app"}}, noop)
	if err := svc.AddView(View{URI: "ui://test/chart", Name: "chart", HTML: "<!DOCTYPE html><title>c</title>"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.AddView(View{URI: "https://x/chart", Name: "chart", HTML: "x"}); err == nil || !strings.Contains(err.Error(), "ui://") {
		t.Errorf("AddView of an https URI: %v, want an error naming ui://", err)
	}
	cs := connect(t, srv.URL, "")
	ctx := context.Background()
	if _, ok := cs.InitializeResult().Capabilities.Extensions[transfer.AppsExtension]; !ok {
		t.Errorf("capabilities.extensions = %v, want %s", cs.InitializeResult().Capabilities.Extensions, transfer.AppsExtension)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"files": transfer.FilesViewURI, "text_only": "", "no_view": "", "chart": "ui://test/chart"}
	for _, tool := range lt.Tools {
		ui, _ := tool.Meta[transfer.MetaUI].(map[string]any)
		got, _ := ui["resourceUri"].(string)
		flat, _ := tool.Meta[transfer.MetaUIResourceURI].(string)
		if got != want[tool.Name] || flat != want[tool.Name] {
			t.Errorf("tool %s: _meta.ui.resourceUri %q, ui/resourceUri %q; want %q", tool.Name, got, flat, want[tool.Name])
		}
		if tool.Name == "chart" && !slices.Equal(anyStrings(ui["visibility"]), []string{"app"}) {
			t.Errorf("tool chart: visibility %v, want [app]", ui["visibility"])
		}
	}
	for _, uri := range []string{transfer.FilesViewURI, "ui://test/chart"} {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		c := rr.Contents[0]
		ui, _ := c.Meta[transfer.MetaUI].(map[string]any)
		csp, _ := ui["csp"].(map[string]any)
		if c.MIMEType != transfer.AppMIMEType || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") ||
			!slices.Equal(anyStrings(csp["connectDomains"]), []string{srv.URL}) || !slices.Equal(anyStrings(csp["resourceDomains"]), []string{srv.URL}) || len(csp) != 2 {
			t.Errorf("read %s: type %q, csp %v; want %s and the agent's origin %s alone", uri, c.MIMEType, csp, transfer.AppMIMEType, srv.URL)
		}
		for _, bad := range []string{"{{", `src="http`, "<link", "@import"} {
			if strings.Contains(c.Text, bad) {
				t.Errorf("read %s: the page holds %q: an unfilled placeholder or something remote", uri, bad)
			}
		}
	}
	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lr.Resources {
		if strings.HasPrefix(r.URI, "ui://") {
			t.Errorf("resources/list shows the view %s; views are found through their tools", r.URI)
		}
	}
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
