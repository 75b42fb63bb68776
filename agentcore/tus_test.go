package agentcore

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentura/agentura/transferclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tus upload through the agent stages a file for its caller: the File-Url
// works as a tool input for that caller only, and the sweep of the staging
// TTL takes unfinished uploads.
func TestTusUploadIsAToolInput(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef-test"
	svc, srv := serveTestService(t, func(c *Config) { c.Auth = "jwt"; c.AuthJWTSecret = secret })
	addEchoTool(svc)
	alice, bob := callerToken(t, secret, "alice"), callerToken(t, secret, "bob")
	payload := bytes.Repeat([]byte("resumable "), 300_000)
	base, _ := url.Parse(srv.URL)

	anon := &transferclient.Tus{Retries: -1}
	if _, err := anon.Send(context.Background(), transferclient.TusEndpoint(base), "x.txt", bytes.NewReader(payload), int64(len(payload))); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("tus upload without a token: %v, want 401", err)
	}
	tus := &transferclient.Tus{Client: &http.Client{Transport: &transferclient.BearerTransport{Token: alice, Origin: base}}, ChunkBytes: 1 << 20}
	fileURL, err := tus.Send(context.Background(), transferclient.TusEndpoint(base), "big.txt", bytes.NewReader(payload), int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"source": map[string]any{"name": "big.txt", "content": fileURL}}
	res, err := connect(t, srv.URL, alice).CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("the call with the File-Url failed: %v", res.Content[0].(*mcp.TextContent).Text)
	}
	if _, body := download(t, res.StructuredContent.(map[string]any)["download_url"].(string)); !bytes.Equal(body, payload) {
		t.Error("echoed tus upload differs")
	}
	res, err = connect(t, srv.URL, bob).CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Error("bob used alice's tus upload")
	}
}
