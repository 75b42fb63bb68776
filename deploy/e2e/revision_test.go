//go:build e2e

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// currentRevision drives the deployed OCR agent, as `make up` runs it, with
// a client that speaks only MCP 2026-07-28 (raw JSON-RPC from the spec's
// shapes, no initialize): discover, tools, a file inline and by URL,
// progress, each caller's own resources, a list change over
// subscriptions/listen, and a dropped request that stops tesseract in the
// container. The agent logs no warning meanwhile. staged is a URL the OCR
// agent signed for scan; longPDF one of a PDF of many pages.
func currentRevision(t *testing.T, d *deployment, scan []byte, staged, longPDF string) {
	since := time.Now().UTC().Format(time.RFC3339)
	c := mcptest.NewSessionless(d.ocrURL + "/mcp")
	disc := mcptest.Call[mcptest.Discovered](t, c, "server/discover", nil)
	if !slices.Contains(disc.SupportedVersions, mcptest.Revision) || disc.Capabilities.Tools == nil {
		t.Fatalf("server/discover of the deployed agent: %+v", disc)
	}
	if tools := mcptest.Call[mcptest.ToolList](t, c, "tools/list", nil); len(tools.Tools) == 0 {
		t.Fatal("tools/list over 2026-07-28: no tools")
	}
	watcher := mcptest.NewSessionless(d.ocrURL + "/mcp")
	lst := watcher.Listen(t, map[string]any{"resourcesListChanged": true})
	lst.Wait(t, "notifications/subscriptions/acknowledged")

	ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
	defer cancel()
	ans, err := c.Send(ctx, "tools/call", map[string]any{"name": "ocr_document", "_meta": map[string]any{"progressToken": "deployed"},
		"arguments": map[string]any{"source": dataURI("image/png", "inline.png", scan), "outputs": []string{"hocr"}}}, nil)
	if err != nil || ans.Response.Error != nil || !strings.Contains(string(ans.Response.Result), "4711") {
		t.Fatalf("tools/call inline over 2026-07-28: %v %+v", err, ans)
	}
	if !slices.ContainsFunc(ans.Notifications, func(m mcptest.Message) bool { return m.Method == "notifications/progress" }) {
		t.Errorf("no progress among %d notifications", len(ans.Notifications))
	}
	lst.Wait(t, "notifications/resources/list_changed")
	ans, err = c.Send(ctx, "tools/call", map[string]any{"name": "ocr_document",
		"arguments": map[string]any{"source": map[string]any{"name": "staged.png", "content": staged}, "outputs": []string{"hocr"}}}, nil)
	if err != nil || ans.Response.Error != nil || !strings.Contains(string(ans.Response.Result), "4711") {
		t.Fatalf("tools/call by URL over 2026-07-28: %v %+v", err, ans)
	}
	other := mcptest.NewSessionless(d.ocrURL + "/mcp")
	mcptest.Call[map[string]any](t, other, "tools/call", map[string]any{"name": "ocr_document",
		"arguments": map[string]any{"source": dataURI("image/png", "other.png", scan), "outputs": []string{"hocr"}}})
	if got := listed(t, c); !slices.Equal(got, []string{"inline.hocr", "staged.hocr"}) {
		t.Errorf("the first caller lists %v, want [inline.hocr staged.hocr]", got)
	}
	if got := listed(t, other); !slices.Equal(got, []string{"other.hocr"}) {
		t.Errorf("the second caller lists %v, want [other.hocr]", got)
	}

	// A dropped request stops the OCR in the container.
	id := d.containerID(t, "ocr-agent")
	dctx, drop := context.WithCancel(context.Background())
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		mcptest.NewSessionless(d.ocrURL+"/mcp").Send(dctx, "tools/call", map[string]any{"name": "ocr_document",
			"arguments": map[string]any{"source": map[string]any{"name": "long.pdf", "content": longPDF}}}, nil)
	}()
	waitTop(t, id, true, time.Minute)
	drop()
	dropped := time.Now()
	waitTop(t, id, false, 5*time.Second)
	t.Logf("tesseract gone from the container %v after the request was dropped", time.Since(dropped).Round(time.Millisecond))
	<-answered

	if w := mcptest.Warnings(run(t, nil, "docker", "logs", "--since", since, id)); len(w) > 0 {
		t.Errorf("the deployed agent logged warnings over 2026-07-28 calls:\n%s", strings.Join(w, "\n"))
	}
}

// listed are the names of a caller's resources.
func listed(t *testing.T, c *mcptest.Sessionless) []string {
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

// waitTop waits until tesseract reads a page in the container (running)
// or no longer does, for at most within (readsPage: the readiness probes'
// `tesseract --list-langs` does not count).
func waitTop(t *testing.T, container string, running bool, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		top := run(t, nil, "docker", "top", container)
		if readsPage(top) == running {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tesseract running=%v not reached within %v; docker top:\n%s", running, within, top)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
