package agentcore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/fileserve"
)

type inlineFormsInput struct {
	Source  FileAttachment   `json:"source"`
	Sources []FileAttachment `json:"sources,omitempty"`
	Note    string           `json:"note,omitempty"`
}

// The pre-pass stages every long inline file in a file position, whatever
// its form, and leaves everything else as it was.
func TestInlinePassForms(t *testing.T) {
	svc, _ := serveTestService(t, nil)
	AddTool(svc, Tool{Name: "forms"}, func(ctx context.Context, call *Call, in inlineFormsInput) (*Result, error) { return nil, nil })
	data := make([]byte, 48<<10)
	rand.Read(data)
	std := base64.StdEncoding.EncodeToString(data)
	escaped := strings.ReplaceAll(std, "/", `\/`) // as PHP writes JSON
	uEscaped := strings.Replace(std, "A", `\u0041`, 3)
	urlRaw := base64.RawURLEncoding.EncodeToString(data)
	lines := base64.StdEncoding.EncodeToString(data[:3000]) + `\n` + base64.StdEncoding.EncodeToString(data[3000:])
	long := strings.Repeat("not a file ", 10000)

	for _, c := range []struct {
		name, args string
		want       int    // files staged
		keep       string // a text that must come through
	}{
		{"data URI, object form", `{"source":{"name":"a.bin","content":"data:application/octet-stream;name=a.bin;base64,` + std + `"}}`, 1, `"name":"a.bin"`},
		{"plain base64 string", `{"source":"` + std + `"}`, 1, ""},
		{"escaped slashes", `{"source":"` + escaped + `"}`, 1, ""},
		{"unicode escapes", `{"source":"` + uEscaped + `"}`, 1, ""},
		{"URL alphabet, unpadded", `{"source":"` + urlRaw + `"}`, 1, ""},
		{"escaped line break", `{"source":"` + lines + `"}`, 1, ""},
		{"array of files", `{"source":"x.txt","sources":["` + std + `",{"name":"b","content":"` + std + `"}]}`, 2, `"source":"x.txt"`},
		{"long text elsewhere", `{"source":"x.txt","note":"` + long + `"}`, 0, long[:100]},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"forms","arguments":` + c.args + `}}`
			out, staged, err := svc.inline.Run(context.Background(), "alice", transport.MCP, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer svc.inline.Discard(context.Background(), staged)
			if !json.Valid(out) {
				t.Fatalf("rewritten body is not JSON: %.300s", out)
			}
			if len(staged) != c.want {
				t.Fatalf("%d files staged, want %d; body %.300s", len(staged), c.want, out)
			}
			if c.keep != "" && !bytes.Contains(out, []byte(c.keep)) {
				t.Errorf("the rewritten body lost %.60q", c.keep)
			}
			for _, m := range staged {
				obj, _, err := svc.store.Open(context.Background(), m.Area, m.Owner, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(obj)
				obj.Close()
				if !bytes.Equal(got, data) {
					t.Errorf("staged %d bytes, not the %d sent", len(got), len(data))
				}
				if u, _ := svc.files.URL(m); !bytes.Contains(out, []byte(strings.Split(u, "?")[0])) {
					t.Errorf("the body does not carry the staged file's URL")
				}
			}
		})
	}
}

// Broken inline files fail the pass and leave nothing staged.
func TestInlinePassRefusals(t *testing.T) {
	svc, _ := serveTestService(t, func(c *Config) { c.MaxUploadBytes = 20 << 10 })
	AddTool(svc, Tool{Name: "forms"}, func(ctx context.Context, call *Call, in inlineFormsInput) (*Result, error) { return nil, nil })
	data := make([]byte, 48<<10)
	rand.Read(data)
	std := base64.StdEncoding.EncodeToString(data)
	for _, c := range []struct{ name, args, want string }{
		{"over the per-file cap", `{"source":"` + std + `"}`, "exceeds"},
		{"not base64", `{"source":"` + std[:4000] + "!!" + std[4000:] + `"}`, "not valid base64"},
		{"cut mid-string", `{"source":"` + std[:15000], "ended inside an inline file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"forms","arguments":` + c.args
			if !strings.HasPrefix(c.name, "cut") {
				body += `}}`
			}
			_, _, err := svc.inline.Run(context.Background(), "alice", transport.MCP, strings.NewReader(body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			svc.store.Walk(context.Background(), fileserve.Staging, func(m fileserve.Meta) error {
				t.Errorf("staged file %s left behind", m.ID)
				return nil
			})
		})
	}
}
