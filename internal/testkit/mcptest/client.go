package mcptest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Protocol is the MCP protocol version the client is pinned to: the newest
// revision served through initialize and a session. mcp-go v1.6.0 would
// prefer 2026-07-28 (no initialize); agents serve that too, and tests of it
// use [Sessionless].
const Protocol = mcp.ProtocolVersion20251125

// CallTimeout bounds one MCP request or download; OCR under -race on a busy
// 2-core machine needs this much.
const CallTimeout = 2 * time.Minute

// Connect opens an mcp-go streamable HTTP session with the server at mcpURL
// (an agent's URL + "/mcp"), pinned to [Protocol]; opts add transport
// options such as transport.WithHTTPHeaders. See [Initialize] for what it
// checks; the client is closed when the test ends.
func Connect(t testing.TB, mcpURL string, opts ...transport.StreamableHTTPCOption) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(mcpURL, append([]transport.StreamableHTTPCOption{transport.WithHTTPTimeout(CallTimeout)}, opts...)...)
	if err != nil {
		t.Fatalf("streamable HTTP transport for %s: %v", mcpURL, err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(Protocol))
	return c, Initialize(t, c)
}

// Initialize starts c (made with client.WithProtocolVersion(Protocol)),
// initializes the session asking for [Protocol] and fails the test unless
// that is what was negotiated. c is closed when the test ends.
func Initialize(t testing.TB, c *client.Client) *mcp.InitializeResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	// Start's context lives as long as the client: it bounds the standalone
	// stream of transport.WithContinuousListening (server notifications).
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start MCP client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = Protocol
	req.Params.ClientInfo = mcp.Implementation{Name: "agentura-mcptest", Version: "1.0.0"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize with protocol %s: %v", Protocol, err)
	}
	if res.ProtocolVersion != Protocol || c.ProtocolVersion() != Protocol {
		t.Fatalf("negotiated protocol: result %q, client %q; want %q", res.ProtocolVersion, c.ProtocolVersion(), Protocol)
	}
	return res
}

// CallTool calls the tool name with args. A protocol error fails the test;
// a tool error (IsError) is returned for the caller to check.
func CallTool(t testing.TB, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := TryCallTool(c, name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// TryCallTool is [CallTool] returning the protocol error, for tests that
// expect one.
func TryCallTool(c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

// ListTools lists the server's tools; an error fails the test.
func ListTools(t testing.TB, c *client.Client) []mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	return res.Tools
}

// Text returns the text content blocks of res, joined by newlines.
func Text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// MustSucceed fails the test when res, the result of the tool name, is a
// tool error.
func MustSucceed(t testing.TB, name string, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s returned a tool error: %s", name, Text(res))
	}
}

// Structured decodes the structured content of res into a T.
func Structured[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	raw := res.RawStructuredContent
	if raw == nil {
		var err error
		if raw, err = json.Marshal(res.StructuredContent); err != nil {
			t.Fatalf("re-encode structured content: %v", err)
		}
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode structured content %s: %v", raw, err)
	}
	return v
}

// File is one produced file of a result, as the contract describes it
// (docs/contract.md, "What an agent returns"); defined here rather than taken from
// the transfer package so that tests check the contract, not the code.
type File struct {
	DownloadURL string `json:"download_url"`
	Filename    string `json:"filename"`
	MIMEType    string `json:"mime_type"`
	SizeBytes   int64  `json:"size_bytes"`
	SHA256      string `json:"sha256"`
}

// StructuredFiles returns the files a result's structured content names:
// the list under "files" when there are several, the flat form for one. A
// result naming no file fails the test.
func StructuredFiles(t testing.TB, res *mcp.CallToolResult) []File {
	t.Helper()
	if many := Structured[struct {
		Files []File `json:"files"`
	}](t, res); len(many.Files) > 0 {
		return many.Files
	}
	if one := Structured[File](t, res); one.DownloadURL != "" {
		return []File{one}
	}
	t.Fatalf("structured content %s names no file; text: %s", res.RawStructuredContent, Text(res))
	return nil
}
