package appstest

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/agentura/agentura/examples/fileagent"
)

// An author's view (examples/fileagent's inspect_file, built with
// agentcore.ViewPage) runs in the host like agentura's own: the hostile
// name is text, the digest the agent computed is shown.
func TestAuthorView(t *testing.T) {
	b := newBrowser(t)
	a := startAgent(t, fileagent.Register, nil)
	h := newHost(t, a)
	chart := chartPNG(t)
	args := map[string]any{"source": map[string]any{"name": hostileName, "content": "data:image/png;base64," + base64.StdEncoding.EncodeToString(chart)}}
	res := a.call(t, "inspect_file", args)
	b.open(t, h.newSession(t, "inspect_file", args, res, "dark"))
	b.waitView(t, `document.body.dataset.ready === "1"`, 30*time.Second)
	var got struct{ Title, SHA string }
	b.view(t, `({ Title: document.querySelector("h1").textContent, SHA: document.querySelector("dd.mono").textContent })`, &got)
	sc, _ := res.StructuredContent.(map[string]any)
	if got.Title != hostileName || got.SHA != sc["sha256"] {
		t.Errorf("the view shows %+v; want the name %q as text and the sha256 %v", got, hostileName, sc["sha256"])
	}
	saveScreenshot(t, b, "apps-author-view.png")
}
