package scaleout_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/agents/composer"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// TestComposerReplicas is the check issue 8 names: two replicas of the
// composer share one bucket and one signing key. A document composed through
// replica A downloads through either; a PDF made by A is a source of a merge
// through B, whose result downloads through A; a multi-file result (Markdown
// plus images/...) made by B downloads through A; and a sequence of calls
// through the round-robin load balancer alternates between them.
func TestComposerReplicas(t *testing.T) {
	c := newClusterOf(t, composer.Info, composer.DefaultAddr, composer.Register, nil)
	a, b := connect(t, c.replicas[0].base, "alice"), connect(t, c.replicas[1].base, "alice")
	pic := "data:image/png;base64," + base64.StdEncoding.EncodeToString(testPNG(t))
	embeds := []any{map[string]any{"name": "chart.png", "content": pic}}
	files := func(res *mcp.CallToolResult) []mcptest.File {
		t.Helper()
		mcptest.MustSucceed(t, "call", res)
		// One file is described at the top level, several under "files".
		return mcptest.StructuredFiles(t, res)
	}
	compose := func(cl *client.Client, format string) mcptest.File {
		t.Helper()
		return files(mcptest.CallTool(t, cl, "compose_document", map[string]any{"markdown": "# Report\n\nПривет, мир.\n\n![chart](chart.png)\n", "format": format, "embeds": embeds}))[0]
	}
	download := func(f mcptest.File, r *replica) []byte {
		t.Helper()
		resp, body := mcptest.Get(t, via(t, f.DownloadURL, r), nil)
		if resp.StatusCode != http.StatusOK || int64(len(body)) != f.SizeBytes {
			t.Fatalf("%s through replica %s: %s, %d of %d bytes", f.Filename, r.name, resp.Status, len(body), f.SizeBytes)
		}
		return body
	}

	pdf := compose(a, "pdf")
	for _, r := range c.replicas {
		if body := download(pdf, r); !bytes.HasPrefix(body, []byte("%PDF-")) {
			t.Fatalf("%s through replica %s is not a PDF", pdf.Filename, r.name)
		}
	}
	res := mcptest.CallTool(t, b, "merge_pdfs", map[string]any{"sources": []any{
		map[string]any{"name": "one.pdf", "content": pdf.DownloadURL},
		map[string]any{"name": "two.pdf", "content": pdf.DownloadURL},
	}})
	merged := files(res)[0]
	if body := download(merged, c.replicas[0]); !bytes.HasPrefix(body, []byte("%PDF-")) {
		t.Fatal("the merged file is not a PDF")
	}

	md := files(mcptest.CallTool(t, b, "compose_document", map[string]any{"markdown": "![chart](chart.png)", "format": "md", "embeds": embeds}))
	if len(md) != 2 || md[1].Filename != "images/chart.png" {
		t.Fatalf("md result: %+v, want the page and images/chart.png", md)
	}
	for _, f := range md {
		download(f, c.replicas[0])
	}

	// Through the load balancer, each call goes to the other replica.
	lb := connect(t, c.lb.URL, "alice")
	before := []int64{c.replicas[0].calls.Load(), c.replicas[1].calls.Load()}
	for i, format := range []string{"docx", "pptx", "html", "pdf"} {
		res := mcptest.CallTool(t, lb, "compose_document", map[string]any{"markdown": "# Slide " + strings.Repeat("x", i) + "\n\n![chart](chart.png)", "format": format, "embeds": embeds})
		f := files(res)[0]
		download(f, c.replicas[i%2])
	}
	for i, r := range c.replicas {
		if r.calls.Load() == before[i] {
			t.Errorf("replica %s took none of the calls through the load balancer", r.name)
		}
	}
}
