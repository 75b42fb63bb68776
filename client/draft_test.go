package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/internal/testkit/drafttest"
)

// The middleware with a server that speaks only the draft MCP file
// contract (internal/testkit/drafttest): a registry file over the inline
// threshold goes to a field that allows upload only through
// files/authorizeUpload and its PUT descriptor, the server gets the file
// URI, and its FileValue output comes back through files/authorizeDownload
// as a registry file whose sha256 is that of the expected bytes; a small
// file goes inline where only inline is allowed; a file over maxSize is
// refused before anything is sent.
func TestDraftOnlyServerThroughTheMiddleware(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	d := drafttest.Start(t)
	reg, err := client.NewRegistry("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	mw, err := client.New(client.Config{Registry: reg, BaseURL: d.URL, InlineMaxBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "client-test", Version: "0"}, nil)
	mw.Attach(c)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.Endpoint(), HTTPClient: client.WithTasks(nil), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	add := func(name string, b []byte) {
		if _, err := reg.Add(ctx, name, bytes.NewReader(b), client.SourceUpload); err != nil {
			t.Fatal(err)
		}
	}
	call := func(tool, name string) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"document": name}})
		if err != nil {
			t.Fatalf("%s(%s): %v", tool, name, err)
		}
		return res
	}

	text := append(bytes.Repeat([]byte("0123456789abcdef"), 20000), "THE END"...) // 320 KB, over the inline threshold
	add("notes.txt", text)
	res := call("reverse", "notes.txt")
	if res.IsError {
		t.Fatalf("reverse: %s", modelText(res))
	}
	args := d.Args()
	var in struct{ Document string }
	json.Unmarshal([]byte(args[len(args)-1]), &in)
	if !strings.HasPrefix(in.Document, d.URI("in-")) {
		t.Fatalf("the server got %q; want the file URI of its upload", in.Document)
	}
	names := client.ProducedNames(res)
	if len(names) != 1 || client.FailedFiles(res) != nil {
		t.Fatalf("produced %v, failed %v; want reversed.txt", names, client.FailedFiles(res))
	}
	e, err := reg.Lookup(names[0])
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(text)
	slices.Reverse(want)
	if got := fileSHA(t, e.Path); got != sha(want) || e.Name != "reversed.txt" {
		t.Errorf("%s: sha256 %s, want %s (the %d bytes reversed)", e.Name, got, sha(want), len(want))
	}
	if b, _ := json.Marshal(res); strings.Contains(string(b), "mcp-file://") || strings.Contains(string(b), d.URL) {
		t.Errorf("the model would see the server's file URI or URL: %s", b)
	}

	add("small.txt", []byte("hello, draft"))
	if res := call("count", "small.txt"); res.IsError || !strings.Contains(modelText(res), "12 bytes") {
		t.Errorf("count: %q", modelText(res))
	}

	add("big.txt", bytes.Repeat([]byte("x"), drafttest.MaxSize+1))
	before := len(d.Args())
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "reverse", Arguments: map[string]any{"document": "big.txt"}})
	if err == nil || !strings.Contains(err.Error(), "maxSize") {
		t.Errorf("a file over maxSize: %v; want a refusal naming maxSize", err)
	}
	if len(d.Args()) != before || d.Pending() != 0 {
		t.Errorf("a refused file reached the server")
	}
}
