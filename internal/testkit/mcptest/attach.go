package mcptest

import (
	"context"
	"strings"
	"testing"

	"github.com/agentura/agentura/transfer"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// CheckAttachTool checks that an agent's tools/list offers attach_file
// (want) or not (!want). Offered, the tool must name the upload view in
// _meta.ui.resourceUri, and resources/read of that view must answer an MCP
// Apps page with a drop zone and a file picker: the view that takes files
// by drag-and-drop. Any difference fails the test.
func CheckAttachTool(t testing.TB, c *client.Client, want bool) {
	t.Helper()
	var attach *mcp.Tool
	tools := ListTools(t, c)
	for i := range tools {
		if tools[i].Name == "attach_file" {
			attach = &tools[i]
		}
	}
	if !want {
		if attach != nil {
			t.Errorf("tools/list offers attach_file; AGENT_ATTACH_TOOL=false should leave it out")
		}
		return
	}
	if attach == nil {
		t.Fatalf("tools/list has no attach_file: the user gets no upload view")
	}
	var view string
	if attach.Meta != nil {
		ui, _ := attach.Meta.AdditionalFields[transfer.MetaUI].(map[string]any)
		view, _ = ui["resourceUri"].(string)
	}
	if view != transfer.UploadViewURI {
		t.Fatalf("attach_file's _meta.ui.resourceUri = %q, want %s", view, transfer.UploadViewURI)
	}
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	rr, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: view}})
	if err != nil {
		t.Fatalf("resources/read %s: %v", view, err)
	}
	var page *mcp.TextResourceContents
	for _, rc := range rr.Contents {
		if tc, ok := rc.(mcp.TextResourceContents); ok {
			page = &tc
		}
	}
	if page == nil || page.MIMEType != transfer.AppMIMEType {
		t.Fatalf("resources/read %s: %+v; want a text of type %s", view, rr.Contents, transfer.AppMIMEType)
	}
	for _, part := range []string{`id="drop"`, "Drop files here", `type="file"`, `"drop"`} {
		if !strings.Contains(page.Text, part) {
			t.Errorf("the upload view's page holds no %q: it takes no files by drag-and-drop or picker", part)
		}
	}
}
