package agentcore

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// An mcp-go v1.2.1 client that does not pin a protocol version first tries
// 2026-07-28 through server/discover. Both server modes must leave it with a
// working session.
func TestUnpinnedMCPGoClient(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		name := map[bool]string{false: "stateful", true: "stateless"}[stateless]
		t.Run(name, func(t *testing.T) {
			svc, srv := serveTestService(t, func(c *Config) { c.MCPStateless = stateless })
			addEchoTool(svc)
			tr, err := transport.NewStreamableHTTP(srv.URL + "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			c := client.NewClient(tr)
			ctx := context.Background()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var init mcpgo.InitializeRequest
			init.Params.ClientInfo = mcpgo.Implementation{Name: "unpinned", Version: "1"}
			res, err := c.Initialize(ctx, init)
			if err != nil {
				t.Fatal(err)
			}
			var call mcpgo.CallToolRequest
			call.Params.Name = "echo"
			call.Params.Arguments = map[string]any{"source": "data:text/plain;name=a.txt,hello"}
			out, err := c.CallTool(ctx, call)
			if err != nil {
				t.Fatalf("negotiated %s, then: %v", res.ProtocolVersion, err)
			}
			if out.IsError {
				t.Fatalf("negotiated %s, then the call failed: %+v", res.ProtocolVersion, out.Content)
			}
		})
	}
}
