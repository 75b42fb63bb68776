package agentcore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/agentura/agentura/agentcore/internal/mcpbind"
	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectFilesAt is connectFiles on an MCP revision, without a token.
func connectFilesAt(t *testing.T, url, revision string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	mcp.AddSendingCustomMethod[*fileUploadParams, *fileUploadResult](c, mcpfile.MethodAuthorizeUpload)
	mcp.AddSendingCustomMethod[*fileDownloadParams, *fileDownloadResult](c, mcpfile.MethodAuthorizeDownload)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: http.DefaultClient, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Attack: without authentication, a produced file's URI leaked to another
// anonymous caller (a log, a shared transcript) buys that caller nothing: it
// gets no download descriptor from files/authorizeDownload and cannot feed
// the file to a tool, and is answered exactly as for a file that never
// existed. The caller that produced the file — its session on 2025-11-25,
// its owner handle on 2026-07-28, stateless or not — still can.
func TestAnonymousFileURIStaysInItsScope(t *testing.T) {
	for _, c := range []struct {
		revision  string
		stateless bool
	}{{"2025-11-25", false}, {"2025-11-25", true}, {"2026-07-28", false}} {
		name := c.revision
		if c.stateless {
			name += "-stateless"
		}
		t.Run(name, func(t *testing.T) { testAnonymousFileURIStaysInItsScope(t, c.revision, c.stateless) })
	}
}

func testAnonymousFileURIStaysInItsScope(t *testing.T, revision string, stateless bool) {
	svc, srv := serveTestService(t, func(c *Config) { c.MCPStateless = stateless })
	AddTool(svc, Tool{Name: "make"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		return call.FileResponse(ctx, OutputBytes("secret.txt", []byte("alice's secret report")))
	})
	AddTool(svc, Tool{Name: "copy"}, func(ctx context.Context, call *Call, in struct {
		Source FileAttachment `json:"source"`
	}) (*Result, error) {
		f, err := call.ResolveFileAttachment(ctx, in.Source)
		if err != nil {
			return nil, err
		}
		return call.FileResponse(ctx, OutputFile("copy-"+f.Name, f.Path))
	})
	ctx := context.Background()
	alice := connectFilesAt(t, srv.URL, revision)
	mallory := connectFilesAt(t, srv.URL, revision)

	made, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "make"})
	if err != nil || made.IsError {
		t.Fatalf("make: %v %s", err, textOf(made))
	}
	var out struct {
		File mcpfile.FileValue `json:"file"`
	}
	b, _ := json.Marshal(made.StructuredContent)
	if json.Unmarshal(b, &out); !strings.HasPrefix(out.File.URI, mcpfile.Scheme+"://") {
		t.Fatalf("no file URI in the result: %s", b)
	}
	var aliceMeta mcp.Meta
	if h, ok := made.Meta[transfer.MetaOwner].(string); ok {
		aliceMeta = mcp.Meta{transfer.MetaOwner: h}
	} else if stateless || revision >= mcpbind.RevisionSessionless {
		t.Fatalf("a sessionless result without an owner handle: _meta %v", made.Meta)
	}
	// Mallory has a scope of her own (a call of hers made it).
	own, err := mallory.CallTool(ctx, &mcp.CallToolParams{Name: "make"})
	if err != nil || own.IsError {
		t.Fatalf("mallory's make: %v", err)
	}
	var malloryMeta mcp.Meta
	if h, ok := own.Meta[transfer.MetaOwner].(string); ok {
		malloryMeta = mcp.Meta{transfer.MetaOwner: h}
	}

	authorize := func(s *mcp.ClientSession, meta mcp.Meta, uri string) (*fileDownloadResult, error) {
		return mcp.CallCustomMethod[*fileDownloadParams, *fileDownloadResult](ctx, s, mcpfile.MethodAuthorizeDownload,
			&fileDownloadParams{ParamsBase: mcp.ParamsBase{Meta: meta}, AuthorizeDownloadParams: mcpfile.AuthorizeDownloadParams{URI: uri}})
	}
	missing := svc.fileURIs.URI(transport.FileKindOut, fileserve.NewID())
	_, errMissing := authorize(mallory, malloryMeta, missing)
	var want *jsonrpc.Error
	if !errors.As(errMissing, &want) {
		t.Fatalf("authorizeDownload of a file that never existed: %v", errMissing)
	}
	for _, meta := range []mcp.Meta{malloryMeta, nil} {
		res, err := authorize(mallory, meta, out.File.URI)
		var got *jsonrpc.Error
		if !errors.As(err, &got) {
			t.Fatalf("mallory (handle %v) got a download descriptor of alice's output: %+v", meta != nil, res)
		}
		if got.Code != want.Code || string(got.Data) != string(want.Data) || strings.ReplaceAll(got.Message, out.File.URI, missing) != want.Message {
			t.Errorf("mallory's refusal tells an existing file from a missing one:\n got %d %s %s\nwant %d %s %s", got.Code, got.Message, got.Data, want.Code, want.Message, want.Data)
		}
		used, err := mallory.CallTool(ctx, &mcp.CallToolParams{Name: "copy", Arguments: map[string]any{"source": out.File.URI}, Meta: meta})
		if err != nil || !used.IsError || !strings.Contains(textOf(used), "unknown to this agent") {
			t.Errorf("mallory fed alice's output to a tool: %v %s", err, textOf(used))
		}
	}

	res, err := authorize(alice, aliceMeta, out.File.URI)
	if err != nil || res.Download == nil || res.File.URI != out.File.URI {
		t.Fatalf("alice's authorizeDownload of her own output: %+v %v", res, err)
	}
	resp, err := http.Get(res.Download.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("alice's download descriptor: %d", resp.StatusCode)
	}
	used, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "copy", Arguments: map[string]any{"source": out.File.URI}, Meta: aliceMeta})
	if err != nil || used.IsError {
		t.Errorf("alice feeding her output to a tool: %v %s", err, textOf(used))
	}
}

// Attack: an upload's file URI (mcp-file://<host>/in/<id>) announced in an
// anonymous caller's scope (its owner handle, or its session) is not an
// input for another anonymous caller who learns it; its announcer uses it.
func TestAnonymousUploadURIStaysInItsScope(t *testing.T) {
	for _, revision := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(revision, func(t *testing.T) { testAnonymousUploadURIStaysInItsScope(t, revision) })
	}
}

func testAnonymousUploadURIStaysInItsScope(t *testing.T, revision string) {
	svc, srv := serveTestService(t, nil)
	AddTool(svc, Tool{Name: "take"}, func(ctx context.Context, call *Call, in struct {
		Source FileAttachment `json:"source"`
	}) (*Result, error) {
		f, err := call.ResolveFileAttachment(ctx, in.Source)
		if err != nil {
			return nil, err
		}
		return TextResult("took " + f.Name), nil
	})
	ctx := context.Background()
	alice := connectFilesAt(t, srv.URL, revision)
	mallory := connectFilesAt(t, srv.URL, revision)
	handleOf := func(s *mcp.ClientSession) mcp.Meta {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "take", Arguments: map[string]any{"source": textDataURI("x.txt", []byte("x"))}})
		if err != nil || res.IsError {
			t.Fatalf("take: %v %s", err, textOf(res))
		}
		if h, ok := res.Meta[transfer.MetaOwner].(string); ok {
			return mcp.Meta{transfer.MetaOwner: h}
		}
		return nil
	}
	aliceMeta, malloryMeta := handleOf(alice), handleOf(mallory)

	data := []byte("alice's upload")
	size := int64(len(data))
	up, err := mcp.CallCustomMethod[*fileUploadParams, *fileUploadResult](ctx, alice, mcpfile.MethodAuthorizeUpload, &fileUploadParams{
		ParamsBase: mcp.ParamsBase{Meta: aliceMeta}, AuthorizeUploadParams: mcpfile.AuthorizeUploadParams{Name: "a.txt", MIMEType: "text/plain", Size: &size}})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(up.Upload.Method, up.Upload.URL, strings.NewReader(string(data)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d", resp.StatusCode)
	}
	for _, meta := range []mcp.Meta{malloryMeta, nil} {
		res, err := mallory.CallTool(ctx, &mcp.CallToolParams{Name: "take", Arguments: map[string]any{"source": up.File.URI}, Meta: meta})
		if err != nil || !res.IsError || !strings.Contains(textOf(res), "unknown to this agent") {
			t.Errorf("mallory (handle %v) used alice's upload: %v %s", meta != nil, err, textOf(res))
		}
	}
	res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "take", Arguments: map[string]any{"source": up.File.URI}, Meta: aliceMeta})
	if err != nil || res.IsError || !strings.Contains(textOf(res), "took a.txt") {
		t.Errorf("alice using her upload: %v %s", err, textOf(res))
	}
}

// textDataURI is a text data URI of b named name.
func textDataURI(name string, b []byte) string {
	return "data:text/plain;name=" + name + ";base64," + base64.StdEncoding.EncodeToString(b)
}
