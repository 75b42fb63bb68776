package ocr_test

// Every MCP revision against the built agent, in the default configuration
// and with AGENT_MCP_STATELESS=true (issue 24): a client that speaks only
// 2026-07-28 (raw JSON-RPC, internal/testkit/mcptest.Sessionless) and mark3labs/mcp-go
// pinned to 2025-11-25. Each run of ordinary calls leaves no WARN line in
// the agent's log.

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// modes are the agent's two configurations.
var modes = []struct {
	name string
	env  []string
}{
	{"default", nil},
	{"stateless", []string{"AGENT_MCP_STATELESS=true"}},
}

// signingKey is the URL signing key of the agents of these tests: one set
// by the operator, as an ordinary deployment has (a generated one is a
// start-up warning).
const signingKey = "AGENT_SIGNING_KEY=revisions-e2e-signing-key-of-32-bytes-or-more"

// noWarnings stops the agent and fails the test if its log has a line at
// WARN or above.
func noWarnings(t *testing.T, a *mcptest.Agent) {
	t.Helper()
	a.Stop(t)
	if w := mcptest.Warnings(a.Logs()); len(w) > 0 {
		t.Errorf("the agent logged warnings over ordinary calls:\n%s", strings.Join(w, "\n"))
	}
}

type ocrResult struct {
	Structured struct {
		Text     string `json:"text"`
		Filename string `json:"filename"` // of the one file produced
	} `json:"structuredContent"`
	IsError bool           `json:"isError"`
	Meta    map[string]any `json:"_meta"`
}

// resourceNames lists a caller's resources over 2026-07-28.
func resourceNames(t *testing.T, c *mcptest.Sessionless) []string {
	t.Helper()
	l := mcptest.Call[struct {
		Resources []struct {
			Name string `json:"name"`
		} `json:"resources"`
	}](t, c, "resources/list", nil)
	var out []string
	for _, r := range l.Resources {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

// TestE2ECurrentRevision: a client that speaks only 2026-07-28 gets every
// feature from the agent in both configurations: discover, tools, a file
// inline and by URL, progress, its own resources only, list changes over
// subscriptions/listen, and cancellation by dropping the request, which
// stops tesseract.
func TestE2ECurrentRevision(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	png := ocrtest.PNG(t, ocrtest.Render(t, sampleLines...))
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			a := mcptest.StartAgent(t, agentBin, append([]string{"AGENT_OCR_TIMEOUT=10m", signingKey}, mode.env...)...)
			c := mcptest.NewSessionless(a.URL + "/mcp")

			disc := mcptest.Call[mcptest.Discovered](t, c, "server/discover", nil)
			if !slices.Contains(disc.SupportedVersions, mcptest.Revision) || disc.Capabilities.Tools == nil {
				t.Fatalf("server/discover: %+v", disc)
			}
			tools := mcptest.Call[mcptest.ToolList](t, c, "tools/list", nil)
			if len(tools.Tools) == 0 || tools.Tools[0].InputSchema["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
				t.Fatalf("tools/list: %+v", tools)
			}

			watcher := mcptest.NewSessionless(a.URL + "/mcp")
			lst := watcher.Listen(t, map[string]any{"resourcesListChanged": true})
			lst.Wait(t, "notifications/subscriptions/acknowledged")

			// Inline, with progress.
			ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
			defer cancel()
			ans, err := c.Send(ctx, "tools/call", map[string]any{"name": "ocr_document", "_meta": map[string]any{"progressToken": "p-inline"},
				"arguments": map[string]any{"source": map[string]any{"name": "inline.png", "content": b64(png)}, "outputs": []string{"hocr"}}}, nil)
			if err != nil || ans.Response.Error != nil {
				t.Fatalf("tools/call inline: %v %+v", err, ans)
			}
			if !slices.ContainsFunc(ans.Notifications, func(m mcptest.Message) bool {
				return m.Method == "notifications/progress" && strings.Contains(string(m.Params), `"p-inline"`)
			}) {
				t.Errorf("no progress for p-inline among %d notifications", len(ans.Notifications))
			}
			lst.Wait(t, "notifications/resources/list_changed")

			// By URL.
			url := mcptest.Upload(t, a.URL, "byurl.png", png)
			res := mcptest.Call[ocrResult](t, c, "tools/call", map[string]any{"name": "ocr_document",
				"arguments": map[string]any{"source": map[string]any{"name": "byurl.png", "content": url}, "outputs": []string{"hocr"}}})
			if res.IsError || res.Structured.Filename != "byurl.hocr" {
				t.Fatalf("tools/call by URL: %+v", res)
			}
			wantWords(t, "by URL", res.Structured.Text, sampleWords...)

			// Each caller lists its own outputs.
			other := mcptest.NewSessionless(a.URL + "/mcp")
			mcptest.Call[ocrResult](t, other, "tools/call", map[string]any{"name": "ocr_document",
				"arguments": map[string]any{"source": "data:image/png;name=other.png;base64," + b64(png), "outputs": []string{"hocr"}}})
			if got := resourceNames(t, c); !slices.Equal(got, []string{"byurl.hocr", "inline.hocr"}) {
				t.Errorf("the first caller lists %v, want [byurl.hocr inline.hocr]", got)
			}
			if got := resourceNames(t, other); !slices.Equal(got, []string{"other.hocr"}) {
				t.Errorf("the second caller lists %v, want [other.hocr]", got)
			}
			if got := resourceNames(t, mcptest.NewSessionless(a.URL+"/mcp")); len(got) != 0 {
				t.Errorf("a caller without a handle lists %v", got)
			}

			// Dropping the request stops tesseract.
			dctx, drop := context.WithCancel(context.Background())
			answered := make(chan struct{})
			args := longOCR(t) // made here: the wait for tesseract below starts now
			go func() {
				defer close(answered)
				mcptest.NewSessionless(a.URL+"/mcp").Send(dctx, "tools/call", map[string]any{"name": "ocr_document", "arguments": args}, nil)
			}()
			pid := a.Cmd.Process.Pid
			waitRecognising(t, pid)
			drop()
			waitNoOCR(t, pid, time.Now(), "the 2026-07-28 request was dropped")
			<-answered
			noWarnings(t, a)
		})
	}
}

// TestE2ELegacyRevision: mcp-go pinned to 2025-11-25 in both
// configurations: tools, a file inline and by URL, progress, its own
// resources only (the session's, or without a session the owner handle it
// carries back), and, on a session with a standing stream, list changes.
// Cancellation of this revision: TestE2ECancel, TestE2ECancelStatelessByDroppedRequest.
func TestE2ELegacyRevision(t *testing.T) {
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	png := ocrtest.PNG(t, ocrtest.Render(t, sampleLines...))
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			stateless := mode.env != nil
			a := mcptest.StartAgent(t, agentBin, append([]string{signingKey}, mode.env...)...)
			var opts []transport.StreamableHTTPCOption
			if !stateless {
				opts = append(opts, transport.WithContinuousListening())
			}
			c, _ := mcptest.Connect(t, a.URL+"/mcp", opts...)
			var mu sync.Mutex
			seen := map[string]int{}
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				mu.Lock()
				seen[n.Method]++
				mu.Unlock()
			})
			if len(mcptest.ListTools(t, c)) == 0 {
				t.Fatal("no tools")
			}
			ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
			defer cancel()
			res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "ocr_document",
				Arguments: map[string]any{"source": map[string]any{"name": "inline.png", "content": b64(png)}, "outputs": []string{"hocr"}},
				Meta:      &mcp.Meta{ProgressToken: "legacy"}}})
			if err != nil {
				t.Fatal(err)
			}
			mcptest.MustSucceed(t, "ocr_document", res)
			var owner *mcp.Meta // carried back without a session
			if h, ok := metaOwner(res); ok {
				owner = &mcp.Meta{AdditionalFields: map[string]any{mcptest.MetaOwner: h}}
			} else if stateless {
				t.Fatal("a stateless result carries no owner handle")
			}
			url := mcptest.Upload(t, a.URL, "byurl.png", png)
			res, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "ocr_document",
				Arguments: map[string]any{"source": map[string]any{"name": "byurl.png", "content": url}, "outputs": []string{"hocr"}}, Meta: owner}})
			if err != nil {
				t.Fatal(err)
			}
			mcptest.MustSucceed(t, "ocr_document", res)
			wantWords(t, "by URL", mcptest.Text(res), sampleWords...)

			other, _ := mcptest.Connect(t, a.URL+"/mcp")
			mcptest.MustSucceed(t, "ocr_document", mcptest.CallTool(t, other, "ocr_document",
				map[string]any{"source": "data:image/png;name=other.png;base64," + b64(png), "outputs": []string{"hocr"}}))
			list := func(c *client.Client, meta *mcp.Meta) []string {
				var req mcp.ListResourcesRequest
				req.Params.Meta = meta
				l, err := c.ListResources(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, r := range l.Resources {
					out = append(out, r.Name)
				}
				slices.Sort(out)
				return out
			}
			if got := list(c, owner); !slices.Equal(got, []string{"byurl.hocr", "inline.hocr"}) {
				t.Errorf("the first caller lists %v, want [byurl.hocr inline.hocr]", got)
			}
			if got := list(other, nil); stateless && len(got) != 0 || !stateless && !slices.Equal(got, []string{"other.hocr"}) {
				t.Errorf("the second caller lists %v", got)
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				mu.Lock()
				progress, changed := seen["notifications/progress"], seen["notifications/resources/list_changed"]
				mu.Unlock()
				if progress > 0 && (stateless || changed > 0) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("notifications seen: %v; want progress, and list changes on the session's stream", seen)
				}
				time.Sleep(50 * time.Millisecond)
			}
			noWarnings(t, a)
		})
	}
}

// metaOwner is the owner handle in a result's _meta.
func metaOwner(res *mcp.CallToolResult) (string, bool) {
	if res.Meta == nil {
		return "", false
	}
	h, ok := res.Meta.AdditionalFields[mcptest.MetaOwner].(string)
	return h, ok && h != ""
}
