package agentcore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/transfer/mcpfile"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type fileUploadParams struct {
	mcp.ParamsBase
	mcpfile.AuthorizeUploadParams
}

type fileUploadResult struct {
	mcp.ResultBase
	mcpfile.AuthorizeUploadResult
}

type fileDownloadParams struct {
	mcp.ParamsBase
	mcpfile.AuthorizeDownloadParams
}

type fileDownloadResult struct {
	mcp.ResultBase
	mcpfile.AuthorizedFile
}

// connectFiles is connect with the draft's files/* methods registered.
func connectFiles(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	mcp.AddSendingCustomMethod[*fileUploadParams, *fileUploadResult](c, mcpfile.MethodAuthorizeUpload)
	mcp.AddSendingCustomMethod[*fileDownloadParams, *fileDownloadResult](c, mcpfile.MethodAuthorizeDownload)
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A file URI is its owner's: another caller can neither use an upload's
// URI as an input nor authorize the download of an output's; the owner
// can. A descriptor takes one upload.
func TestFileURIsAreTheOwners(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef-secret"
	svc, srv := serveTestService(t, func(c *Config) { c.Auth = "jwt"; c.AuthJWTSecret = secret })
	type in struct {
		Source FileAttachment `json:"source" accept:"text/plain"`
	}
	AddTool(svc, Tool{Name: "copy"}, func(ctx context.Context, call *Call, in in) (*Result, error) {
		f, err := call.ResolveFileAttachment(ctx, in.Source)
		if err != nil {
			return nil, err
		}
		return call.FileResponse(ctx, OutputFile("copy-"+f.Name, f.Path))
	})
	ctx := context.Background()
	alice := connectFiles(t, srv.URL, callerToken(t, secret, "alice"))
	bob := connectFiles(t, srv.URL, callerToken(t, secret, "bob"))

	data := []byte("hello, file contract")
	sum := sha256.Sum256(data)
	size := int64(len(data))
	up, err := mcp.CallCustomMethod[*fileUploadParams, *fileUploadResult](ctx, alice, mcpfile.MethodAuthorizeUpload, &fileUploadParams{
		AuthorizeUploadParams: mcpfile.AuthorizeUploadParams{Name: "a.txt", MIMEType: "text/plain", Size: &size, Digest: mcpfile.SHA256(hex.EncodeToString(sum[:]))}})
	if err != nil {
		t.Fatal(err)
	}
	put := func() int {
		req, _ := http.NewRequest(up.Upload.Method, up.Upload.URL, bytes.NewReader(data))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := put(); code != http.StatusCreated {
		t.Fatalf("upload: %d", code)
	}
	if code := put(); code != http.StatusConflict {
		t.Fatalf("second upload to the same descriptor: %d, want 409", code)
	}

	call := func(s *mcp.ClientSession, uri string) *mcp.CallToolResult {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "copy", Arguments: map[string]any{"source": uri}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call(bob, up.File.URI); !res.IsError || !strings.Contains(textOf(res), "unknown to this agent") {
		t.Fatalf("bob with alice's upload: %v %s", res.IsError, textOf(res))
	}
	res := call(alice, up.File.URI)
	if res.IsError {
		t.Fatalf("alice with her upload: %s", textOf(res))
	}
	var out struct {
		File mcpfile.FileValue `json:"file"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	if out.File.Size == nil || *out.File.Size != size || out.File.Digest == nil || *out.File.Digest != *mcpfile.SHA256(hex.EncodeToString(sum[:])) {
		t.Fatalf("the output's FileValue: %s", b)
	}
	get := func(s *mcp.ClientSession) error {
		_, err := mcp.CallCustomMethod[*fileDownloadParams, *fileDownloadResult](ctx, s, mcpfile.MethodAuthorizeDownload,
			&fileDownloadParams{AuthorizeDownloadParams: mcpfile.AuthorizeDownloadParams{URI: out.File.URI}})
		return err
	}
	var re *jsonrpc.Error
	if err := get(bob); !errors.As(err, &re) || re.Code != jsonrpc.CodeInvalidParams || !strings.Contains(string(re.Data), mcpfile.ReasonUnknownFile) {
		t.Fatalf("bob's authorizeDownload of alice's output: %v", err)
	}
	if err := get(alice); err != nil {
		t.Fatalf("alice's authorizeDownload of her output: %v", err)
	}
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// files/authorizeUpload refuses, before any byte is sent, a file over the
// owner's quota, with the reason a host can show.
func TestAuthorizeUploadChecksTheQuota(t *testing.T) {
	svc, srv := serveTestService(t, func(c *Config) { c.OwnerQuotaBytes = 1000 })
	AddTool(svc, Tool{Name: "take"}, func(ctx context.Context, call *Call, in struct {
		Source FileAttachment `json:"source"`
	}) (*Result, error) {
		return &Result{Text: "ok"}, nil
	})
	s := connectFiles(t, srv.URL, "")
	for _, c := range []struct {
		size   int64
		reason string
	}{{2000, mcpfile.ReasonQuotaExceeded}, {500, ""}} {
		size := c.size
		_, err := mcp.CallCustomMethod[*fileUploadParams, *fileUploadResult](context.Background(), s, mcpfile.MethodAuthorizeUpload, &fileUploadParams{
			AuthorizeUploadParams: mcpfile.AuthorizeUploadParams{Name: "a.bin", Size: &size}})
		var re *jsonrpc.Error
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("%d bytes under a quota of 1000: %v", size, err)
		case c.reason != "" && (!errors.As(err, &re) || re.Code != jsonrpc.CodeInvalidParams || !strings.Contains(string(re.Data), c.reason)):
			t.Errorf("%d bytes over a quota of 1000: %v, want -32602 %s", size, err, c.reason)
		}
	}
}

// Two PUTs of one descriptor at once: the second is refused while the first
// is still sending, and the store keeps one file, not two.
func TestDescriptorUploadedOnceWhileInFlight(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	type in struct {
		Source FileAttachment `json:"source"`
	}
	AddTool(svc, Tool{Name: "take"}, func(ctx context.Context, call *Call, in in) (*Result, error) { return TextResult("ok"), nil })
	ctx := context.Background()
	s := connectFiles(t, srv.URL, "")
	data := []byte("one upload, not two")
	size := int64(len(data))
	up, err := mcp.CallCustomMethod[*fileUploadParams, *fileUploadResult](ctx, s, mcpfile.MethodAuthorizeUpload, &fileUploadParams{
		AuthorizeUploadParams: mcpfile.AuthorizeUploadParams{Name: "a.txt", MIMEType: "text/plain", Size: &size}})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	first := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(up.Upload.Method, up.Upload.URL, pr)
		req.ContentLength = size
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	pw.Write(data[:5]) // the first PUT is under way
	deadline := time.Now().Add(30 * time.Second)
	for claimed := false; !claimed && time.Now().Before(deadline); {
		// Until the handler has claimed the descriptor, a second PUT on
		// its own connection may overtake the first and win it.
		svc.fileTickets.uploading.Range(func(any, any) bool { claimed = true; return false })
		time.Sleep(time.Millisecond)
	}
	var code int
	for {
		req, _ := http.NewRequest(up.Upload.Method, up.Upload.URL, bytes.NewReader(data))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		code = resp.StatusCode
		if code == http.StatusConflict || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	pw.Write(data[5:])
	pw.Close()
	if code != http.StatusConflict {
		t.Errorf("a second PUT while the first was sending: %d, want 409", code)
	}
	if c := <-first; c != http.StatusCreated {
		t.Errorf("the first PUT: %d, want 201", c)
	}
	var staged int
	svc.backing.Walk(ctx, fileserve.Staging, func(fileserve.Meta) error { staged++; return nil })
	if staged != 1 {
		t.Errorf("%d staged files, want 1", staged)
	}
}
