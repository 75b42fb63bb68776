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

// Without authentication, a produced file's URI is the capability to it
// (issue 37): whoever holds the FileValue resolves it with
// files/authorizeDownload and feeds it to a tool — another anonymous
// session, a sessionless caller with no handle of agentura's own — as
// whoever holds a download URL fetches it. Without its token (the handle
// alone, as a log that drops queries shows it), or with another file's
// token, it buys nothing, and is answered exactly as for a file that never
// existed; once the download URL handed out with it is revoked, neither
// works.
func TestAnonymousFileURIIsTheCapability(t *testing.T) {
	for _, c := range []struct {
		revision  string
		stateless bool
	}{{"2025-11-25", false}, {"2025-11-25", true}, {"2026-07-28", false}} {
		name := c.revision
		if c.stateless {
			name += "-stateless"
		}
		t.Run(name, func(t *testing.T) { testAnonymousFileURIIsTheCapability(t, c.revision, c.stateless) })
	}
}

func testAnonymousFileURIIsTheCapability(t *testing.T, revision string, stateless bool) {
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

	produce := func(s *mcp.ClientSession) (transfer.File, mcp.Meta) {
		t.Helper()
		made, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "make"})
		if err != nil || made.IsError {
			t.Fatalf("make: %v %s", err, textOf(made))
		}
		var out transfer.File
		b, _ := json.Marshal(made.StructuredContent)
		if json.Unmarshal(b, &out); out.File == nil || !strings.HasPrefix(out.File.URI, mcpfile.Scheme+"://") {
			t.Fatalf("no file URI in the result: %s", b)
		}
		if h, ok := made.Meta[transfer.MetaOwner].(string); ok {
			return out, mcp.Meta{transfer.MetaOwner: h}
		} else if stateless || revision >= mcpbind.RevisionSessionless {
			t.Fatalf("a sessionless result without an owner handle: _meta %v", made.Meta)
		}
		return out, nil
	}
	out, _ := produce(alice)
	own, malloryMeta := produce(mallory) // mallory has a scope, and a file, of her own

	authorize := func(s *mcp.ClientSession, meta mcp.Meta, uri string) (*fileDownloadResult, error) {
		return mcp.CallCustomMethod[*fileDownloadParams, *fileDownloadResult](ctx, s, mcpfile.MethodAuthorizeDownload,
			&fileDownloadParams{ParamsBase: mcp.ParamsBase{Meta: meta}, AuthorizeDownloadParams: mcpfile.AuthorizeDownloadParams{URI: uri}})
	}
	bare, token, _ := strings.Cut(out.File.URI, "?token=")
	_, ownToken, _ := strings.Cut(own.File.URI, "?token=")
	if token == "" || ownToken == "" {
		t.Fatalf("file URIs without a capability: %s, %s", out.File.URI, own.File.URI)
	}
	missing := svc.fileURIs.URI(transport.FileKindOut, fileserve.NewID())
	_, errMissing := authorize(mallory, malloryMeta, missing)
	var want *jsonrpc.Error
	if !errors.As(errMissing, &want) {
		t.Fatalf("authorizeDownload of a file that never existed: %v", errMissing)
	}
	for _, meta := range []mcp.Meta{malloryMeta, nil} {
		res, err := authorize(mallory, meta, bare)
		var got *jsonrpc.Error
		if !errors.As(err, &got) {
			t.Fatalf("mallory (handle %v) got a download descriptor of alice's output by its bare URI: %+v", meta != nil, res)
		}
		if got.Code != want.Code || string(got.Data) != string(want.Data) || strings.ReplaceAll(got.Message, bare, missing) != want.Message {
			t.Errorf("mallory's refusal tells an existing file from a missing one:\n got %d %s %s\nwant %d %s %s", got.Code, got.Message, got.Data, want.Code, want.Message, want.Data)
		}
		used, err := mallory.CallTool(ctx, &mcp.CallToolParams{Name: "copy", Arguments: map[string]any{"source": bare}, Meta: meta})
		if err != nil || !used.IsError || !strings.Contains(textOf(used), "unknown to this agent") {
			t.Errorf("mallory fed alice's output to a tool by its bare URI: %v %s", err, textOf(used))
		}
		if _, err := authorize(mallory, meta, bare+"?token="+ownToken); err == nil {
			t.Errorf("alice's file URI with the token of mallory's own file was authorized")
		}
	}

	// Whoever holds the whole URI: alice, mallory, a caller with nothing.
	for _, who := range []struct {
		name string
		s    *mcp.ClientSession
		meta mcp.Meta
	}{{"alice", alice, nil}, {"mallory", mallory, malloryMeta}, {"a new caller", connectFilesAt(t, srv.URL, revision), nil}} {
		res, err := authorize(who.s, who.meta, out.File.URI)
		if err != nil || res.Download == nil || res.File.URI != out.File.URI {
			t.Fatalf("%s's authorizeDownload of the FileValue she holds: %+v %v", who.name, res, err)
		}
		_, body := download(t, res.Download.URL)
		if string(body) != "alice's secret report" {
			t.Errorf("%s's download descriptor gave %q", who.name, body)
		}
		used, err := who.s.CallTool(ctx, &mcp.CallToolParams{Name: "copy", Arguments: map[string]any{"source": out.File.URI}, Meta: who.meta})
		if err != nil || used.IsError {
			t.Errorf("%s feeding the FileValue she holds to a tool: %v %s", who.name, err, textOf(used))
		}
	}

	// Revoking the download URL handed out with the URI revokes both.
	rb, _ := json.Marshal(transfer.RevokeRequest{URL: out.DownloadURL})
	resp, err := http.Post(srv.URL+transfer.RevokePath, "application/json", strings.NewReader(string(rb)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if _, err := authorize(alice, nil, out.File.URI); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("the file URI after its download URL was revoked: %v; want a refusal saying it was revoked", err)
	}
}

// An upload's file URI (mcp-file://<host>/in/<id>?token=…) announced in an
// anonymous caller's scope is the capability to the upload: whoever holds
// it uses it as an input; its bare form (no token) is no input for
// another anonymous caller who learns it, while its announcer, in its
// scope, still uses even that.
func TestAnonymousUploadURIIsTheCapability(t *testing.T) {
	for _, revision := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(revision, func(t *testing.T) { testAnonymousUploadURIIsTheCapability(t, revision) })
	}
}

func testAnonymousUploadURIIsTheCapability(t *testing.T, revision string) {
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
	bare, _, _ := strings.Cut(up.File.URI, "?token=")
	for _, meta := range []mcp.Meta{malloryMeta, nil} {
		res, err := mallory.CallTool(ctx, &mcp.CallToolParams{Name: "take", Arguments: map[string]any{"source": bare}, Meta: meta})
		if err != nil || !res.IsError || !strings.Contains(textOf(res), "unknown to this agent") {
			t.Errorf("mallory (handle %v) used alice's upload by its bare URI: %v %s", meta != nil, err, textOf(res))
		}
		res, err = mallory.CallTool(ctx, &mcp.CallToolParams{Name: "take", Arguments: map[string]any{"source": up.File.URI}, Meta: meta})
		if err != nil || res.IsError || !strings.Contains(textOf(res), "took a.txt") {
			t.Errorf("mallory (handle %v) holding the whole URI could not use it: %v %s", meta != nil, err, textOf(res))
		}
	}
	for _, uri := range []string{up.File.URI, bare} {
		res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "take", Arguments: map[string]any{"source": uri}, Meta: aliceMeta})
		if err != nil || res.IsError || !strings.Contains(textOf(res), "took a.txt") {
			t.Errorf("alice using her upload (%s): %v %s", uri, err, textOf(res))
		}
	}
}

// textDataURI is a text data URI of b named name.
func textDataURI(name string, b []byte) string {
	return "data:text/plain;name=" + name + ";base64," + base64.StdEncoding.EncodeToString(b)
}
