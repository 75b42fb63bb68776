package fileagent_test

// The MCP-native features (issue 15) against the built agent, with the
// independent client mark3labs/mcp-go: digests, produced files as
// resources, logging to the client, output schemas.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// archive calls archive_files on two small files and returns the result.
func archive(t *testing.T, c *client.Client) *mcp.CallToolResult {
	t.Helper()
	return mcptest.CallTool(t, c, "archive_files", map[string]any{
		"sources": []any{
			map[string]any{"name": "a.txt", "content": "data:text/plain;base64,YWxwaGE="},
			map[string]any{"name": "b.txt", "content": "data:text/plain;base64,YmV0YQ=="},
		},
	})
}

func TestMCPNativeDigests(t *testing.T) {
	a := mcptest.StartAgent(t, agentBin)
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	res := archive(t, c)
	mcptest.MustSucceed(t, "archive_files", res)
	files := mcptest.StructuredFiles(t, res)
	if len(files) != 2 {
		t.Fatalf("got %d files, want 2", len(files))
	}
	links := map[string]mcp.ResourceLink{}
	for _, ct := range res.Content {
		if l, ok := ct.(mcp.ResourceLink); ok {
			links[l.URI] = l
		}
	}
	for _, f := range files {
		body := mcptest.Download(t, f.DownloadURL)
		sum := sha256.Sum256(body)
		if got := hex.EncodeToString(sum[:]); f.SHA256 != got {
			t.Errorf("%s: structured sha256 %q, served bytes hash to %s", f.Filename, f.SHA256, got)
		}
		l, ok := links[f.DownloadURL]
		if !ok {
			t.Errorf("%s: no resource_link with its URL", f.Filename)
			continue
		}
		if l.Meta == nil || l.Meta.AdditionalFields["sha256"] != f.SHA256 {
			t.Errorf("%s: resource_link _meta %+v lacks sha256 %s", f.Filename, l.Meta, f.SHA256)
		}
	}
}

// Produced files are resources of their owner: resources/read of a
// resource_link URI gives the file, resources/list shows the caller's files
// and not another caller's, and the session hears list_changed.
func TestMCPNativeResources(t *testing.T) {
	const secret = "resources-test-secret-of-at-least-32-bytes"
	a := mcptest.StartAgent(t, agentBin, "AGENT_AUTH=jwt", "AGENT_AUTH_JWT_SECRET="+secret)
	bearer := func(sub string) transport.StreamableHTTPCOption {
		return transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + mcptest.BearerToken(t, secret, sub)})
	}
	alice, _ := mcptest.Connect(t, a.URL+"/mcp", bearer("alice"), transport.WithContinuousListening())
	bob, _ := mcptest.Connect(t, a.URL+"/mcp", bearer("bob"))
	changed := make(chan struct{}, 8)
	alice.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/resources/list_changed" {
			changed <- struct{}{}
		}
	})
	ctx := context.Background()

	tpl, err := alice.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tpl.ResourceTemplates) != 1 || !strings.HasPrefix(tpl.ResourceTemplates[0].URITemplate.Raw(), a.URL+"/files/") {
		t.Fatalf("resources/templates/list: %+v, %v; want the template of file URIs", tpl, err)
	}

	res := archive(t, alice)
	mcptest.MustSucceed(t, "archive_files", res)
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Error("no notifications/resources/list_changed after a call produced files")
	}
	for _, ct := range res.Content {
		l, ok := ct.(mcp.ResourceLink)
		if !ok {
			continue
		}
		rr, err := alice.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: l.URI}})
		if err != nil || len(rr.Contents) != 1 {
			t.Fatalf("resources/read %s: %+v, %v", l.Name, rr, err)
		}
		var got []byte
		switch c := rr.Contents[0].(type) {
		case mcp.TextResourceContents:
			got = []byte(c.Text)
		case mcp.BlobResourceContents:
			got, _ = base64.StdEncoding.DecodeString(c.Blob)
		}
		if want := mcptest.Download(t, l.URI); !bytes.Equal(got, want) {
			t.Errorf("resources/read %s: %d bytes differ from the %d served", l.Name, len(got), len(want))
		}
		if strings.HasSuffix(l.Name, "SHA256SUMS") {
			if _, ok := rr.Contents[0].(mcp.TextResourceContents); !ok {
				t.Errorf("%s (%s) came as a blob, want text", l.Name, l.MIMEType)
			}
		}
		// Another caller's file is not found.
		if _, err := bob.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: l.URI}}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("bob reads alice's %s: %v, want not found", l.Name, err)
		}
	}

	list, err := alice.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range list.Resources {
		names = append(names, r.Name)
	}
	if len(names) != 2 || names[0] != "bundle.zip" && names[1] != "bundle.zip" {
		t.Errorf("alice's resources %v, want bundle.zip and bundle/SHA256SUMS", names)
	}
	if bl, err := bob.ListResources(ctx, mcp.ListResourcesRequest{}); err != nil || len(bl.Resources) != 0 {
		t.Errorf("bob's resources: %+v, %v; want none (alice's files are hers)", bl, err)
	}
}

// logging/setLevel filters Call.Log: at info the client hears each archived
// file, at error nothing; progress goes out for a progressToken.
func TestMCPNativeLoggingAndProgress(t *testing.T) {
	a := mcptest.StartAgent(t, agentBin)
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	var mu sync.Mutex
	var logs, progress []map[string]any
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		mu.Lock()
		defer mu.Unlock()
		switch n.Method {
		case "notifications/message":
			logs = append(logs, n.Params.AdditionalFields)
		case "notifications/progress":
			progress = append(progress, n.Params.AdditionalFields)
		}
	})
	ctx := context.Background()
	call := func(token any) {
		t.Helper()
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "archive_files", Arguments: map[string]any{
			"sources": []any{
				map[string]any{"name": "a.txt", "content": "data:text/plain;base64,YWxwaGE="},
				map[string]any{"name": "b.txt", "content": "data:text/plain;base64,YmV0YQ=="},
			}}, Meta: &mcp.Meta{ProgressToken: token}}})
		if err != nil {
			t.Fatal(err)
		}
		mcptest.MustSucceed(t, "archive_files", res)
	}
	count := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return len(logs), len(progress)
	}

	call(nil) // no level set: no log messages; no token: no progress
	if l, p := count(); l != 0 || p != 0 {
		t.Errorf("without setLevel or a token: %d log and %d progress notifications, want none", l, p)
	}
	if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelInfo}}); err != nil {
		t.Fatal(err)
	}
	call("archive-1")
	if l, p := count(); l != 2 || p != 2 {
		t.Errorf("at level info with a token: %d log and %d progress notifications, want 2 and 2", l, p)
	}
	mu.Lock()
	if len(logs) > 0 && (logs[0]["level"] != "info" || logs[0]["logger"] != "archive_files") {
		t.Errorf("log notification %v", logs[0])
	}
	if len(progress) == 2 && (progress[1]["progress"] != 2.0 || progress[1]["total"] != 2.0 || progress[1]["progressToken"] != "archive-1") {
		t.Errorf("last progress %v, want 2 of 2 for archive-1", progress[1])
	}
	mu.Unlock()
	if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelError}}); err != nil {
		t.Fatal(err)
	}
	call(nil)
	if l, _ := count(); l != 2 {
		t.Errorf("at level error: %d log notifications in all, want still 2", l)
	}
}

// inspect_file publishes an outputSchema its structured content validates
// against, and its annotations.
func TestMCPNativeOutputSchemaAndHints(t *testing.T) {
	a := mcptest.StartAgent(t, agentBin)
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	var tool *mcp.Tool
	for _, tl := range mcptest.ListTools(t, c) {
		if tl.Name == "inspect_file" {
			tool = &tl
		}
	}
	if tool == nil {
		t.Fatal("no inspect_file")
	}
	ann := tool.Annotations
	if ann.Title != "Inspect a file" || ann.ReadOnlyHint == nil || !*ann.ReadOnlyHint || ann.IdempotentHint == nil || !*ann.IdempotentHint ||
		ann.DestructiveHint == nil || *ann.DestructiveHint || ann.OpenWorldHint == nil || *ann.OpenWorldHint {
		t.Errorf("annotations %+v", ann)
	}
	raw, _ := json.Marshal(tool.OutputSchema)
	var schema jsonschema.Schema
	if err := json.Unmarshal(raw, &schema); err != nil || schema.Type != "object" {
		t.Fatalf("output schema %s: %v", raw, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	res := mcptest.CallTool(t, c, "inspect_file", map[string]any{"source": map[string]any{"name": "a.txt", "content": "data:text/plain;base64,YWxwaGE="}})
	mcptest.MustSucceed(t, "inspect_file", res)
	sc := mcptest.Structured[map[string]any](t, res)
	if err := resolved.Validate(sc); err != nil {
		t.Errorf("structured content %v does not validate against the output schema %s: %v", sc, raw, err)
	}
	if sc["sha256"] != "8ed3f6ad685b959ead7022518e1af76cd816f8e8ec7ccdda1ed4018e8f2223f8" { // sha256("alpha")
		t.Errorf("structured content %v", sc)
	}
	// A schema-tag constraint is enforced: name is at most 100 characters.
	res, err = mcptest.TryCallTool(c, "archive_files", map[string]any{"name": strings.Repeat("n", 101),
		"sources": []any{map[string]any{"name": "a.txt", "content": "data:text/plain;base64,YWxwaGE="}}})
	if err == nil && !res.IsError {
		t.Error("a 101-character archive name was accepted")
	}
}

// show_images sends an archived picture as an image content block.
func TestMCPNativeImage(t *testing.T) {
	a := mcptest.StartAgent(t, agentBin)
	c, _ := mcptest.Connect(t, a.URL+"/mcp")
	var pic bytes.Buffer
	png.Encode(&pic, image.NewGray(image.Rect(0, 0, 4, 4)))
	res := mcptest.CallTool(t, c, "archive_files", map[string]any{"show_images": true, "sources": []any{
		map[string]any{"name": "dot.png", "content": "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic.Bytes())},
		map[string]any{"name": "a.txt", "content": "data:text/plain;base64,YWxwaGE="},
	}})
	mcptest.MustSucceed(t, "archive_files", res)
	var images int
	for _, ct := range res.Content {
		if img, ok := ct.(mcp.ImageContent); ok {
			images++
			if data, _ := base64.StdEncoding.DecodeString(img.Data); img.MIMEType != "image/png" || !bytes.Equal(data, pic.Bytes()) {
				t.Errorf("image block %s of %d bytes, want the PNG sent", img.MIMEType, len(data))
			}
		}
	}
	if images != 1 {
		t.Errorf("%d image blocks, want 1", images)
	}
}
