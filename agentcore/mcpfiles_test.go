package agentcore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/s3test"
	"github.com/agentura/agentura/transfer"
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
		claimed = svc.fileURIs.Uploading()
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
	backing(svc).Walk(ctx, fileserve.Staging, func(fileserve.Meta) error { staged++; return nil })
	if staged != 1 {
		t.Errorf("%d staged files, want 1", staged)
	}
}

// A descriptor upload whose bytes are not what files/authorizeUpload was
// told is refused with the reason a host can show, and the staging area
// keeps nothing of it: more bytes than declared (413, whether the length
// is announced or the body is streamed), fewer (400), bytes of a type no
// tool takes though the declared type was one (415, typeMismatch: they are
// not the type declared). A declared type
// outside the tools' accept lists is refused before any byte is sent,
// with a JSON-RPC error.
func TestAuthorizeUploadRefusesBytesOtherThanDeclared(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	AddTool(svc, Tool{Name: "take"}, func(ctx context.Context, call *Call, in struct {
		Source FileAttachment `json:"source" accept:"text/plain"`
	}) (*Result, error) {
		if _, err := call.ResolveFileAttachment(ctx, in.Source); err != nil {
			return nil, err
		}
		return TextResult("ok"), nil
	})
	ctx := context.Background()
	s := connectFiles(t, srv.URL, "")
	staged := func() int {
		n := 0
		backing(svc).Walk(ctx, fileserve.Staging, func(fileserve.Meta) error { n++; return nil })
		return n
	}
	text := bytes.Repeat([]byte("plain text\n"), 100)
	for _, c := range []struct {
		name     string
		declared int64
		body     []byte
		streamed bool // no Content-Length: the cap is met while storing
		code     int
		reason   string
	}{
		{"larger, length announced", 500, text, false, http.StatusRequestEntityTooLarge, mcpfile.ReasonSizeMismatch},
		{"larger, streamed", 500, text, true, http.StatusRequestEntityTooLarge, mcpfile.ReasonSizeMismatch},
		{"smaller", int64(len(text)) + 100, text, false, http.StatusBadRequest, mcpfile.ReasonSizeMismatch},
		{"another type", int64(len(pngBytes(t))), pngBytes(t), false, http.StatusUnsupportedMediaType, mcpfile.ReasonTypeMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			size := c.declared
			up, err := mcp.CallCustomMethod[*fileUploadParams, *fileUploadResult](ctx, s, mcpfile.MethodAuthorizeUpload, &fileUploadParams{
				AuthorizeUploadParams: mcpfile.AuthorizeUploadParams{Name: "notes.txt", MIMEType: "text/plain", Size: &size}})
			if err != nil {
				t.Fatal(err)
			}
			var body io.Reader = bytes.NewReader(c.body)
			if c.streamed {
				body = io.MultiReader(body) // a reader of unknown length: sent chunked
			}
			req, _ := http.NewRequest(up.Upload.Method, up.Upload.URL, body)
			if c.streamed {
				req.ContentLength = -1
			}
			req.Header.Set("Content-Type", "text/plain")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var refusal transfer.Error
			json.NewDecoder(resp.Body).Decode(&refusal)
			if resp.StatusCode != c.code || refusal.Reason != c.reason || refusal.Error == "" {
				t.Errorf("%d %+v; want %d with reason %s", resp.StatusCode, refusal, c.code, c.reason)
			}
			if n := staged(); n != 0 {
				t.Errorf("%d files staged after the refusal, want none", n)
			}
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "take", Arguments: map[string]any{"source": up.File.URI}})
			if err != nil || !res.IsError || !strings.Contains(textOf(res), "has not arrived") {
				t.Errorf("the refused upload's file URI as an input: %v %q; want a tool error saying it has not arrived", err, textOf(res))
			}
		})
	}

	size := int64(100)
	_, err := mcp.CallCustomMethod[*fileUploadParams, *fileUploadResult](ctx, s, mcpfile.MethodAuthorizeUpload, &fileUploadParams{
		AuthorizeUploadParams: mcpfile.AuthorizeUploadParams{Name: "a.pdf", MIMEType: "application/pdf", Size: &size}})
	var re *jsonrpc.Error
	var data mcpfile.ErrorData
	if !errors.As(err, &re) || re.Code != jsonrpc.CodeInvalidParams || json.Unmarshal(re.Data, &data) != nil ||
		data.Reason != mcpfile.ReasonTypeNotAccepted || len(data.Accept) != 1 || data.Accept[0] != "text/plain" {
		t.Errorf("a declared type no tool takes: %v; want -32602 typeNotAccepted with accept [text/plain]", err)
	}
	if n := staged(); n != 0 {
		t.Errorf("%d files staged, want none", n)
	}
}

// Bytes of a type a tool takes, but not the type declared to
// files/authorizeUpload (a PNG sent for a declared PDF, both taken by the
// tool), are refused (415, typeMismatch) and nothing is kept, as
// docs/contract.md says; the declared type's own bytes are kept.
func TestAuthorizeUploadRefusesTypeOtherThanDeclared(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	AddTool(svc, Tool{Name: "scan"}, func(ctx context.Context, call *Call, in struct {
		Source FileAttachment `json:"source" accept:"application/pdf, image/png"`
	}) (*Result, error) {
		return TextResult("ok"), nil
	})
	ctx := context.Background()
	s := connectFiles(t, srv.URL, "")
	png := pngBytes(t)
	put := func(name, declared string) (int, transfer.Error) {
		t.Helper()
		size := int64(len(png))
		up, err := mcp.CallCustomMethod[*fileUploadParams, *fileUploadResult](ctx, s, mcpfile.MethodAuthorizeUpload, &fileUploadParams{
			AuthorizeUploadParams: mcpfile.AuthorizeUploadParams{Name: name, MIMEType: declared, Size: &size}})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(up.Upload.Method, up.Upload.URL, bytes.NewReader(png))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var refusal transfer.Error
		json.NewDecoder(resp.Body).Decode(&refusal)
		return resp.StatusCode, refusal
	}
	staged := func() int {
		n := 0
		backing(svc).Walk(ctx, fileserve.Staging, func(fileserve.Meta) error { n++; return nil })
		return n
	}
	if code, refusal := put("scan.pdf", "application/pdf"); code != http.StatusUnsupportedMediaType || refusal.Reason != mcpfile.ReasonTypeMismatch ||
		!strings.Contains(refusal.Error, "image/png") || !strings.Contains(refusal.Error, "application/pdf") {
		t.Errorf("a PNG sent for a declared PDF: %d %+v; want 415 typeMismatch naming both types", code, refusal)
	}
	if n := staged(); n != 0 {
		t.Errorf("%d files staged after the refusal, want none", n)
	}
	if code, refusal := put("scan.png", "image/png"); code != http.StatusCreated {
		t.Errorf("a PNG declared image/png: %d %+v; want 201", code, refusal)
	}
}

// With S3 storage and AGENT_S3_REDIRECT, files/authorizeDownload answers
// the store's presigned URL itself (the reference host follows no
// redirect): a plain GET of it, with no header and no redirect, gives the
// produced file's bytes.
func TestAuthorizeDownloadPresignedOnS3(t *testing.T) {
	s3 := s3test.Start(t)
	bucket := s3.NewBucket(t)
	svc, srv := serveTestService(t, func(c *Config) {
		c.StorageURL = s3.StorageURL(bucket)
		c.StorageEnv = s3.Env()
		c.S3Redirect = true
	})
	data := bytes.Repeat([]byte("from the bucket\n"), 4096)
	AddTool(svc, Tool{Name: "make"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		return call.FileResponse(ctx, OutputBytes("made.txt", data))
	})
	ctx := context.Background()
	s := connectFiles(t, srv.URL, "")
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "make", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("make: %v %s", err, textOf(res))
	}
	var out struct {
		File mcpfile.FileValue `json:"file"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(b, &out); out.File.URI == "" {
		t.Fatalf("no FileValue in %s", b)
	}
	// Without authentication the file is the scope's it was made in: the
	// owner handle of the result goes back with the request.
	params := &fileDownloadParams{AuthorizeDownloadParams: mcpfile.AuthorizeDownloadParams{URI: out.File.URI}}
	params.Meta = mcp.Meta{transfer.MetaOwner: res.Meta[transfer.MetaOwner]}
	got, err := mcp.CallCustomMethod[*fileDownloadParams, *fileDownloadResult](ctx, s, mcpfile.MethodAuthorizeDownload, params)
	if err != nil {
		t.Fatal(err)
	}
	d := got.Download
	if d == nil || d.Check(time.Now(), http.MethodGet) != nil || !strings.Contains(d.URL, s3.Endpoint) || !strings.Contains(d.URL, "X-Amz-Signature=") {
		t.Fatalf("the download descriptor: %+v; want a GET of a presigned URL of the store at %s", d, s3.Endpoint)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	sum := sha256.Sum256(body)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) || *mcpfile.SHA256(hex.EncodeToString(sum[:])) != *got.File.Digest {
		t.Fatalf("GET of the presigned URL: %s, %d bytes (want %d), digest %+v", resp.Status, len(body), len(data), got.File.Digest)
	}
}

// A sessionless 2026-07-28 client that sends nothing of agentura's own (no
// owner handle) resolves the FileValue a tool call handed it with
// files/authorizeDownload, as SEP-2631 describes, and the bytes match its
// digest (sha-256, base64url without padding); so does another such
// client it passes the FileValue to (issue 37).
func TestSessionlessFileValueResolvesWithoutHandle(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	addEchoTool(svc)
	caller := mcptest.NewSessionless(srv.URL + "/mcp")
	caller.KeepOwner = false
	type fileValue struct {
		URI    string `json:"uri"`
		Digest struct {
			Algorithm string `json:"algorithm"`
			Value     string `json:"value"`
		} `json:"digest"`
	}
	res := mcptest.Call[struct {
		StructuredContent struct {
			File fileValue `json:"file"`
		} `json:"structuredContent"`
	}](t, caller, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"source": "data:text/plain;name=r.txt,the report"}})
	fv := res.StructuredContent.File
	if fv.URI == "" || fv.Digest.Algorithm != "sha-256" {
		t.Fatalf("no FileValue with a sha-256 digest: %+v", fv)
	}
	other := mcptest.NewSessionless(srv.URL + "/mcp")
	other.KeepOwner = false
	for name, c := range map[string]*mcptest.Sessionless{"the caller": caller, "another caller": other} {
		got := mcptest.Call[struct {
			Download struct {
				Method string `json:"method"`
				URL    string `json:"url"`
			} `json:"download"`
		}](t, c, "files/authorizeDownload", map[string]any{"uri": fv.URI})
		if got.Download.Method != "GET" {
			t.Fatalf("%s: a download descriptor of method %q", name, got.Download.Method)
		}
		_, body := download(t, got.Download.URL)
		sum := sha256.Sum256(body)
		if string(body) != "the report" || base64.RawURLEncoding.EncodeToString(sum[:]) != fv.Digest.Value {
			t.Errorf("%s downloaded %q, whose digest is not the FileValue's %s", name, body, fv.Digest.Value)
		}
	}
}

// A 2026-07-28 client that declares the draft's files capability (§2) gets
// each produced file as a §8 content block {"type": "file", "file":
// FileValue} as well, equal to the FileValue of structuredContent; one
// that does not declares it gets none (the go-sdk client, among others,
// refuses a content type it does not know).
func TestFileContentBlocksForClientsThatDeclareFiles(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	addEchoTool(svc)
	type result struct {
		Content []struct {
			Type string          `json:"type"`
			File json.RawMessage `json:"file"`
		} `json:"content"`
		StructuredContent struct {
			File json.RawMessage `json:"file"`
		} `json:"structuredContent"`
	}
	call := func(declare bool) result {
		c := mcptest.NewSessionless(srv.URL + "/mcp")
		if declare {
			c.Capabilities = map[string]any{"files": map[string]any{"upload": true, "download": true, "transports": []string{"https"}}}
		}
		return mcptest.Call[result](t, c, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"source": "data:text/plain;name=r.txt,x"}})
	}
	blocks := func(r result) (out []json.RawMessage) {
		for _, c := range r.Content {
			if c.Type == "file" {
				out = append(out, c.File)
			}
		}
		return out
	}
	with := call(true)
	if b := blocks(with); len(b) != 1 || !bytes.Equal(b[0], with.StructuredContent.File) {
		t.Errorf("a client declaring files got file blocks %s; want one, the FileValue %s", b, with.StructuredContent.File)
	}
	if b := blocks(call(false)); len(b) != 0 {
		t.Errorf("a client that declared nothing got file blocks %s", b)
	}
}
