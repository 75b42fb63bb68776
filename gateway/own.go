package gateway

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
)

// AddFileInput is the input of the gateway's add_file tool.
type AddFileInput struct {
	Path string `json:"path" jsonschema:"the file's path: relative to a root folder of the gateway, or absolute under one"`
	Name string `json:"name,omitempty" jsonschema:"the name to give it in this conversation (default: its file name)"`
}

// addOwnTools adds list_files and add_file.
func (g *Gateway) addOwnTools() {
	mcp.AddTool(g.server, &mcp.Tool{
		Name:        toolListFiles,
		Description: "List the files of this conversation: those tools produced (with where they were saved) and those added with add_file or named by path. Name them exactly so in tool calls.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: g.listFiles()}}}, nil, nil
	})
	mcp.AddTool(g.server, &mcp.Tool{
		Name: toolAddFile,
		Description: "Add a local file to this conversation, so tools can be given it by name. The path must lie under " +
			g.roots.String() + ".",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in AddFileInput) (*mcp.CallToolResult, any, error) {
		e, err := g.addFile(ctx, in)
		if err != nil {
			return toolError(err.Error()), nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Added " + e.Describe() + "; name it " + e.Name + " in tool calls."}}}, nil, nil
	})
}

// addFile registers the file at in.Path (under a root) as in.Name.
func (g *Gateway) addFile(ctx context.Context, in AddFileInput) (client.Entry, error) {
	if strings.TrimSpace(in.Path) == "" {
		return client.Entry{}, fmt.Errorf("add_file needs a path under %s", g.roots)
	}
	f, err := g.roots.open(in.Path)
	if err != nil {
		return client.Entry{}, g.missing(in.Path, err)
	}
	defer f.Close()
	return g.reg.Add(ctx, cmp.Or(in.Name, filepath.Base(in.Path)), f, client.SourceUpload)
}

// listFiles is the registry as the model sees it.
func (g *Gateway) listFiles() string {
	entries := g.reg.Entries()
	if len(entries) == 0 {
		return fmt.Sprintf("No files yet. Name a file by its path under %s, or add it with add_file.", g.roots)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Describe())
		if at, ok := g.saved[e.Name]; ok {
			b.WriteString(" — saved as " + at)
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}
