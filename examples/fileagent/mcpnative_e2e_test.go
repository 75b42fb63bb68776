package fileagent_test

// The MCP-native features (issue 15) against the built agent, with the
// independent client mark3labs/mcp-go: digests, produced files as
// resources, logging to the client, output schemas.

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/internal/mcptest"
)

// archive calls archive_files on two small files and returns the result.
func archive(t *testing.T, c *client.Client) *mcp.CallToolResult {
	t.Helper()
	return mcptest.CallTool(t, c, "archive_files", map[string]any{
		"sources": []any{
			map[string]any{"name": "a.txt", "content": "data:text/plain;base64,YWxwaGE="},
			map[string]any{"name": "b.txt", "content": "data:text/plain;base64,YmV0YQ=="},
		},
	})
}

func TestMCPNativeDigests(t *testing.T) {
	a := mcptest.StartAgent(t, agentBin)
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	res := archive(t, c)
	mcptest.MustSucceed(t, "archive_files", res)
	files := mcptest.StructuredFiles(t, res)
	if len(files) != 2 {
		t.Fatalf("got %d files, want 2", len(files))
	}
	links := map[string]mcp.ResourceLink{}
	for _, ct := range res.Content {
		if l, ok := ct.(mcp.ResourceLink); ok {
			links[l.URI] = l
		}
	}
	for _, f := range files {
		body := mcptest.Download(t, f.DownloadURL)
		sum := sha256.Sum256(body)
		if got := hex.EncodeToString(sum[:]); f.SHA256 != got {
			t.Errorf("%s: structured sha256 %q, served bytes hash to %s", f.Filename, f.SHA256, got)
		}
		l, ok := links[f.DownloadURL]
		if !ok {
			t.Errorf("%s: no resource_link with its URL", f.Filename)
			continue
		}
		if l.Meta == nil || l.Meta.AdditionalFields["sha256"] != f.SHA256 {
			t.Errorf("%s: resource_link _meta %+v lacks sha256 %s", f.Filename, l.Meta, f.SHA256)
		}
	}
}
