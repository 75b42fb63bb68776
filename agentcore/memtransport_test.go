package agentcore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/fileserve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memTransport is a way for files to travel that exists only in this test:
// "mem://in/<name>" names a file of its map, "mem://out/<id>" a file the
// agent produced for the caller. It is one implementation of
// transport.Transport and one registration line: the resolver, the schema
// builder and the response builder name no transport, so they take it as
// they take the standard ones.
type memTransport struct {
	in    map[string][]byte
	store fileserve.Store
}

func (*memTransport) Schemes() []string { return []string{"mem"} }

func (*memTransport) Describe() transport.Description {
	return transport.Description{Content: "mem:// URI (this test's)"}
}

func (*memTransport) Resolves(string) bool { return false }

func (t *memTransport) Open(ctx context.Context, owner, content string) (*transport.Source, error) {
	if id, ok := strings.CutPrefix(content, "mem://out/"); ok {
		obj, m, err := t.store.Open(ctx, fileserve.Outputs, owner, id)
		if err != nil {
			return nil, fmt.Errorf("no produced file %s for you: %w", id, err)
		}
		return &transport.Source{ReadCloser: obj, Name: m.Name, MIMEType: m.MIMEType, Size: m.Size, Where: content}, nil
	}
	name, _ := strings.CutPrefix(content, "mem://in/")
	data, ok := t.in[name]
	if !ok {
		return nil, fmt.Errorf("no file %q in memory", name)
	}
	return &transport.Source{ReadCloser: io.NopCloser(bytes.NewReader(data)), Name: name, Size: int64(len(data)), Where: content}, nil
}

func (*memTransport) Offer(m fileserve.Meta, o *transport.Offer) error {
	o.Links = append(o.Links, "mem://out/"+m.ID)
	return nil
}

// A transport added by one line reaches every path: the tool's schema
// names it, a file it names is resolved for the tool, and each produced
// file is offered through it (a resource_link of its own, which a later
// call takes as an input).
func TestTransportInOneFile(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	svc.resolver.Add(&memTransport{in: map[string][]byte{"hello.txt": []byte("hello")}, store: svc.store})
	AddTool(svc, Tool{Name: "shout", Description: "upper-cases a text file"}, func(ctx context.Context, call *Call, in echoInput) (*Result, error) {
		f, err := call.ResolveFileAttachment(ctx, in.Source)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			return nil, err
		}
		dir, err := call.WorkDir()
		if err != nil {
			return nil, err
		}
		out := filepath.Join(dir, "loud-"+f.Name)
		if err := os.WriteFile(out, bytes.ToUpper(data), 0o600); err != nil {
			return nil, err
		}
		return call.FileResponse(ctx, OutputFile("loud-"+f.Name, out))
	})
	cs := connect(t, srv.URL, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if schema := fmt.Sprint(tools.Tools[0].InputSchema); !strings.Contains(schema, "mem:// URI (this test's)") {
		t.Errorf("the schema does not name the transport: %s", schema)
	}
	call := func(content string) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shout", Arguments: map[string]any{"source": map[string]any{"name": "", "content": content}}})
		if err != nil || res.IsError {
			t.Fatalf("shout %s: %v %+v", content, err, res)
		}
		return res
	}
	memLink := func(res *mcp.CallToolResult) string {
		t.Helper()
		var links []string
		for _, c := range res.Content {
			if l, ok := c.(*mcp.ResourceLink); ok {
				links = append(links, l.URI)
			}
		}
		if len(links) != 2 || !strings.HasPrefix(links[0], srv.URL+"/files/") || !strings.HasPrefix(links[1], "mem://out/") {
			t.Fatalf("resource links %q; want the download URL, then the mem:// link", links)
		}
		return links[1]
	}
	first := memLink(call("mem://in/hello.txt"))
	second := call(first) // the produced file, taken back by its mem:// link
	memLink(second)
	sc := second.StructuredContent.(map[string]any)
	if sum := sha256.Sum256([]byte("HELLO")); sc["filename"] != "loud-loud-hello.txt" || sc["sha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("second output: %v", sc)
	}
}
