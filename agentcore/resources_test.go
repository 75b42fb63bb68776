package agentcore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentura/agentura/agentcore/internal/mcpbind"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type countInput struct {
	N    int `json:"n"`
	Size int `json:"size"`
}

// resources/list pages through a caller's produced files newest first (its
// session's on 2025-11-25, its owner handle's on 2026-07-28), another
// caller (without auth) sees none of them, and resources/read refuses a
// file over AGENT_RESOURCE_MAX_BYTES, naming the download URL.
func TestResourcesListAndReadLimits(t *testing.T) {
	for _, revision := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(revision, func(t *testing.T) { testResourcesListAndReadLimits(t, revision) })
	}
}

func testResourcesListAndReadLimits(t *testing.T, revision string) {
	svc, srv := serveTestService(t, func(c *Config) { c.ResourceMaxBytes = 100 })
	AddTool(svc, Tool{Name: "make"}, func(ctx context.Context, call *Call, in countInput) (*Result, error) {
		var outs []Output
		for i := range in.N {
			outs = append(outs, OutputBytes(fmt.Sprintf("f%03d.txt", i), []byte(strings.Repeat("x", in.Size))))
		}
		return call.FileResponse(ctx, outs...)
	})
	cs := connectAt(t, srv.URL, "", revision)
	other := connectAt(t, srv.URL, "", revision)
	if got := cs.InitializeResult().ProtocolVersion; got != revision {
		t.Fatalf("negotiated %s, want %s", got, revision)
	}
	ctx := context.Background()
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "make", Arguments: map[string]any{"n": mcpbind.ResourcePageSize + 5, "size": 10}})
	if err != nil {
		t.Fatal(err)
	}
	// On 2026-07-28 the caller carries its owner handle; the second call
	// joins the first one's scope by it.
	var meta mcp.Meta
	if h, ok := first.Meta[transfer.MetaOwner].(string); ok {
		meta = mcp.Meta{transfer.MetaOwner: h}
	} else if revision >= mcpbind.RevisionSessionless {
		t.Fatalf("a sessionless result without an owner handle: _meta %v", first.Meta)
	}
	big, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "make", Arguments: map[string]any{"n": 1, "size": 101}, Meta: meta})
	if err != nil || big.IsError {
		t.Fatal(err, big)
	}

	var names []string
	seen := map[string]bool{}
	cursor := ""
	pages := 0
	for {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor, Meta: meta})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range res.Resources {
			if seen[r.URI] {
				t.Fatalf("resource %s listed twice", r.Name)
			}
			seen[r.URI] = true
			names = append(names, r.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if len(names) != mcpbind.ResourcePageSize+6 || pages != 2 {
		t.Fatalf("listed %d resources in %d pages, want %d in 2", len(names), pages, mcpbind.ResourcePageSize+6)
	}
	if names[0] != "f000.txt" || len(seen) != len(names) {
		t.Errorf("first listed %q, want the newest file (the big one, f000.txt of the second call)", names[0])
	}
	if res, err := other.ListResources(ctx, &mcp.ListResourcesParams{}); err != nil || len(res.Resources) != 0 {
		t.Errorf("another caller lists %+v (%v), want none", res, err)
	}
	if _, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "bogus!", Meta: meta}); err == nil {
		t.Error("a bogus cursor was accepted")
	}

	var link *mcp.ResourceLink
	for _, c := range big.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
	if err == nil || !strings.Contains(err.Error(), "AGENT_RESOURCE_MAX_BYTES") || !strings.Contains(err.Error(), "download it from its URL") {
		t.Errorf("reading a 101-byte file over a 100-byte cap: %v", err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: srv.URL + "/files/0123456789abcdef0123456789abcdef/x?token=forged"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("reading a forged URI: %v, want not found", err)
	}
}
