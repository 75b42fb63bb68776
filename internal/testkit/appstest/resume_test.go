package appstest

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newSessionWithStorage is newSession in a host that sandboxes the view
// with allow-scripts allow-same-origin, as hosts do that serve views from
// a sandbox origin of their own: the view then has localStorage.
func (h *testHost) newSessionWithStorage(t *testing.T, name string, args map[string]any, res *mcp.CallToolResult) string {
	t.Helper()
	u := h.newSession(t, name, args, res, "light")
	sid := u[strings.LastIndex(u, "sid=")+len("sid="):]
	h.mu.Lock()
	h.sessions[sid].Sandbox = "allow-scripts allow-same-origin"
	h.mu.Unlock()
	return u
}

// TestUploadResumesAfterReload reloads the upload view while a file is on
// its way, its connection stalled; the same file dropped again on the
// reloaded view goes on from the offset the agent holds, not from zero,
// and arrives byte-exact. Under the default sandbox (allow-scripts alone)
// the view has no storage and says so.
func TestUploadResumesAfterReload(t *testing.T) {
	const size = 64 << 20
	b := newBrowser(t)
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var proxy *cutProxy
	a := startAgent(t, func(svc *agentcore.Service) error { return svc.AddAttachTool() }, func(c *agentcore.Config) {
		proxy = newCutProxy(t, front, strings.TrimPrefix(c.PublicURL, "http://"))
		c.PublicURL = "http://" + front.Addr().String()
		c.MaxUploadBytes = 100 << 20
	})
	h := newHost(t, a)
	res := a.call(t, agentcore.AttachToolName, map[string]any{})

	b.open(t, h.newSession(t, agentcore.AttachToolName, map[string]any{}, res, "light"))
	b.waitView(t, `document.body.dataset.ready === "1"`, 30*time.Second)
	var storage string
	b.view(t, `document.body.dataset.storage`, &storage)
	if storage != "0" {
		t.Errorf("under sandbox=allow-scripts the view says storage %q; an opaque origin has none", storage)
	}

	b.open(t, h.newSessionWithStorage(t, agentcore.AttachToolName, map[string]any{}, res))
	b.waitView(t, `document.body.dataset.ready === "1" && document.body.dataset.storage === "1"`, 30*time.Second)
	path, sum := bigFile(t, "survey.bin", size, 3)
	proxy.held, proxy.release = make(chan struct{}), make(chan struct{})
	start := proxy.sent.Load()
	proxy.holdAt.Store(start + 24<<20) // in the second PATCH
	b.dropFile(t, path)
	select {
	case <-proxy.held:
	case <-time.After(time.Minute):
		var state string
		b.view(t, `[...document.querySelectorAll(".item")].map(i => i.textContent).join(" | ")`, &state)
		t.Fatalf("the upload never reached 24 MiB (%d bytes sent); the view shows %q", proxy.sent.Load()-start, state)
	}
	// The host reloads the view mid-upload; the stalled connection is let
	// go once the old page is gone.
	b.view(t, `location.reload()`, nil)
	b.waitView(t, `document.body.dataset.ready === "1" && !document.querySelector(".item")`, 30*time.Second)
	close(proxy.release)
	time.Sleep(time.Second) // the agent stores what the stalled PATCH brought
	again := proxy.sent.Load()
	b.dropFile(t, path)
	u := b.waitUpload(t, 1, 5*time.Minute)
	if !u.Done || u.URL == "" {
		t.Fatalf("after the reload the view shows %+v; want survey.bin attached", u)
	}
	var from string
	b.view(t, `document.querySelector(".item").dataset.resumedFrom || ""`, &from)
	offset, _ := strconv.Atoi(from)
	if offset < 16<<20 || offset >= size {
		t.Errorf("the reloaded view resumed from %q; want from the agent's offset, at least the first 16 MiB PATCH", from)
	}
	if resent := proxy.sent.Load() - again; resent > size-int64(offset)+1<<20 {
		t.Errorf("after the reload %d bytes went to the agent; resuming from %d needs %d", resent, offset, size-offset)
	}
	if got, n := fetchSHA256(t, u.URL); got != sum || n != size {
		t.Errorf("the agent holds %d bytes of sha256 %s; the file has %d of %s", n, got, size, sum)
	}
	var left int
	b.view(t, `Object.keys(localStorage).filter(k => k.startsWith("agentura-tus ")).length`, &left)
	if left != 0 {
		t.Errorf("%d upload URLs left in the view's storage after the upload completed", left)
	}
	t.Logf("resumed after the reload from %d MiB of %d", offset>>20, size>>20)
}
