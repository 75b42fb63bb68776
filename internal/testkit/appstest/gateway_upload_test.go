package appstest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/transfer"
)

// TestUploadViewThroughGateway opens attach_file's upload view as a
// desktop host behind agentura's gateway gets it: the capability in the
// result's _meta still names the agent's own tus endpoint (the gateway
// forwards it untouched), a file dropped on the view goes straight to
// the agent, byte-exact, and the model is told its name and reference,
// not its signed URL.
func TestUploadViewThroughGateway(t *testing.T) {
	const size = 8 << 20
	b := newBrowser(t)
	a := startAgent(t, func(svc *agentcore.Service) error { return svc.AddAttachTool() }, nil)
	via, _ := behindGateway(t, a)
	h := newHost(t, via)
	res := via.call(t, agentcore.AttachToolName, map[string]any{})
	raw, _ := json.Marshal(res.Meta[transfer.MetaUploadCapability])
	var capability transfer.UploadCapability
	if err := json.Unmarshal(raw, &capability); err != nil || capability.Token == "" || capability.Endpoint != a.url+transfer.TusPath {
		t.Fatalf("attach_file through the gateway: _meta[%s] = %s; want a capability for the agent's %s", transfer.MetaUploadCapability, raw, a.url+transfer.TusPath)
	}
	if strings.Contains(textOf(res), capability.Token) {
		t.Error("through the gateway the capability is in the text the model reads")
	}
	b.open(t, h.newSession(t, agentcore.AttachToolName, map[string]any{}, res, "light"))
	b.waitView(t, `document.body.dataset.ready === "1"`, 30*time.Second)
	path, sum := bigFile(t, "through-gateway.bin", size, 4)
	b.dropFile(t, path)
	u := b.waitUpload(t, 1, 2*time.Minute)
	if !u.Done || !strings.HasPrefix(u.URL, a.url+"/files/") {
		t.Fatalf("the view shows %+v; want the file attached, with a URL of the agent", u)
	}
	if got, n := fetchSHA256(t, u.URL); got != sum || n != size {
		t.Errorf("the agent holds %d bytes of sha256 %s; the file dropped has %d of %s", n, got, size, sum)
	}
	checkModelContext(t, b, 1, u)
}
