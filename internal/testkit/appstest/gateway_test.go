package appstest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/gateway"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// behindGateway fronts a with agentura's gateway, as a desktop host runs
// it, and returns the agent as the host sees it through the gateway, and
// the gateway's folder of saved outputs.
func behindGateway(t *testing.T, a *testAgent) (*testAgent, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := t.TempDir()
	g, err := gateway.New(context.Background(), gateway.Config{Agents: []gateway.Agent{{URL: a.url + "/mcp"}}, Roots: []string{t.TempDir()}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "desktop-host", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	via := &testAgent{url: a.url, session: cs, tools: map[string]*mcp.Tool{}}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range lt.Tools {
		via.tools[tool.Name] = tool
	}
	return via, out
}

// TestFileViewThroughGateway shows a result in the file view as a desktop
// host behind agentura's gateway gets it: the view read through the
// gateway, each file shown with where the gateway saved it, and the
// button asking the host to open that copy.
func TestFileViewThroughGateway(t *testing.T) {
	b := newBrowser(t)
	via, out := behindGateway(t, startAgent(t, registerFiles, nil))
	h := newHost(t, via)
	args := map[string]any{"markdown": "# Minutes\n\nDecisions of the day.\n", "format": "pdf", "filename": "minutes.pdf"}
	res := via.call(t, "compose_document", args)
	b.open(t, h.newSession(t, "compose_document", args, res, "light"))
	b.waitView(t, `document.body.dataset.ready === "1"`, 30*time.Second)
	var shown struct{ Status, Button, SHA string }
	b.view(t, `({ Status: document.querySelector(".saved").textContent, Button: document.querySelector("a.button").textContent,
		SHA: document.querySelector(".sha").textContent.replace("sha256 ", "") })`, &shown)
	saved := strings.TrimPrefix(shown.Status, "Saved as ")
	if shown.Button != "Open" || saved == shown.Status || !strings.HasPrefix(saved, out+string(filepath.Separator)) {
		t.Fatalf("the view shows %+v; want the copy saved under %s and an Open button", shown, out)
	}
	data, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != shown.SHA {
		t.Errorf("the saved copy has sha256 %x, the view shows %s", sum, shown.SHA)
	}
	saveScreenshot(t, b, "apps-files-gateway.png")
	b.view(t, `document.querySelector("a.button").click()`, nil)
	b.waitHost(t, "window.__host.downloads.length === 1", 30*time.Second)
	var dl []struct{ URL string }
	b.host(t, "window.__host.downloads", &dl)
	if u, err := url.Parse(dl[0].URL); err != nil || u.Scheme != "file" || u.Path != saved {
		t.Errorf("the view asked the host to open %q, want the saved copy file://%s", dl[0].URL, saved)
	}
}
