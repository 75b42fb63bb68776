package appstest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
// not its signed URL; a tool called through the gateway with that
// reference reads the file.
func TestUploadViewThroughGateway(t *testing.T) {
	const size = 8 << 20
	b := newBrowser(t)
	a := startAgent(t, func(svc *agentcore.Service) error {
		type digestInput struct {
			Source agentcore.FileAttachment `json:"source"`
		}
		agentcore.AddTool(svc, agentcore.Tool{Name: "digest_file", OutputTypes: []string{}},
			func(ctx context.Context, call *agentcore.Call, in digestInput) (*agentcore.Result, error) {
				f, err := call.ResolveFileAttachment(ctx, in.Source)
				if err == nil {
					var r *os.File
					if r, err = os.Open(f.Path); err == nil {
						defer r.Close()
						h := sha256.New()
						n, err := io.Copy(h, r)
						return agentcore.TextResult(fmt.Sprintf("%s: %d bytes, sha256 %x", f.Name, n, h.Sum(nil))), err
					}
				}
				return nil, err
			})
		return svc.AddAttachTool()
	}, nil)
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
	// The model passes the reference it was told; the gateway sends it on,
	// and the agent reads the staged file for the gateway's session.
	res = via.call(t, "digest_file", map[string]any{"source": map[string]any{"name": "through-gateway.bin", "content": u.Ref}})
	if want := fmt.Sprintf("through-gateway.bin: %d bytes, sha256 %s", size, sum); !strings.Contains(textOf(res), want) {
		t.Errorf("digest_file of the reference through the gateway: %q; want %q", textOf(res), want)
	}
}
