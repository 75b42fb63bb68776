package gateway_test

// The gateway against a third-party server that speaks only the draft MCP
// file contract (SEP-2631 at modelcontextprotocol commit c3cf0eba), written
// here from the draft's shapes with the go-sdk server and net/http alone —
// none of agentura's packages: file inputs are URI strings declared by an
// x-mcp-file object, uploads go through files/authorizeUpload and a PUT
// descriptor, outputs are FileValues resolved by files/authorizeDownload.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/gateway"
)

// The draft's shapes (schema/draft/schema.ts at c3cf0eba).
type (
	draftDigest struct {
		Algorithm string `json:"algorithm"`
		Value     string `json:"value"`
	}
	draftFile struct {
		URI      string       `json:"uri"`
		Name     string       `json:"name,omitempty"`
		MIMEType string       `json:"mimeType,omitempty"`
		Size     *int64       `json:"size,omitempty"`
		Digest   *draftDigest `json:"digest,omitempty"`
	}
	draftDescriptor struct {
		Transport string            `json:"transport"`
		Method    string            `json:"method"`
		URL       string            `json:"url"`
		Headers   map[string]string `json:"headers,omitempty"`
		ExpiresAt string            `json:"expiresAt,omitempty"`
	}
	draftUploadParams struct {
		mcp.ParamsBase
		Name     string       `json:"name,omitempty"`
		MIMEType string       `json:"mimeType,omitempty"`
		Size     *int64       `json:"size,omitempty"`
		Digest   *draftDigest `json:"digest,omitempty"`
	}
	draftDownloadParams struct {
		mcp.ParamsBase
		URI string `json:"uri"`
	}
	draftResult struct {
		mcp.ResultBase
		File     draftFile        `json:"file"`
		Upload   *draftDescriptor `json:"upload,omitempty"`
		Download *draftDescriptor `json:"download,omitempty"`
	}
)

// draftServer keeps files by id: what hosts uploaded and what its tool made.
type draftServer struct {
	t       *testing.T
	ts      *httptest.Server
	mu      sync.Mutex
	files   map[string][]byte
	pending map[string]draftUploadParams
	names   map[string]string
	args    []string // the tools' arguments as they arrived
	n       int
}

func (d *draftServer) uri(id string) string { return "mcp-file://draft.example/" + id }

func (d *draftServer) digest(b []byte) *draftDigest {
	sum := sha256.Sum256(b)
	return &draftDigest{Algorithm: "sha-256", Value: base64.RawURLEncoding.EncodeToString(sum[:])}
}

func newDraftServer(t *testing.T) *draftServer {
	d := &draftServer{t: t, files: map[string][]byte{}, pending: map[string]draftUploadParams{}, names: map[string]string{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "draft-only", Version: "1"}, nil)
	file := func(accept string, modes ...string) map[string]any {
		return map[string]any{"type": "string", "format": "uri",
			"x-mcp-file": map[string]any{"accept": []string{accept}, "maxSize": 1 << 20, "transferModes": modes}}
	}
	// reverse takes a text file by upload only and makes its reverse.
	s.AddTool(&mcp.Tool{Name: "reverse", Description: "reverses a text file", InputSchema: map[string]any{
		"type": "object", "required": []string{"document"},
		"properties": map[string]any{"document": file("text/plain", "upload")},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Document string }
		json.Unmarshal(req.Params.Arguments, &in)
		d.mu.Lock()
		defer d.mu.Unlock()
		d.args = append(d.args, string(req.Params.Arguments))
		id, ok := strings.CutPrefix(in.Document, d.uri(""))
		b, have := d.files[id]
		if !ok || !have {
			return nil, &jsonrpc.Error{Code: -32602, Message: "unknown file URI " + in.Document}
		}
		out := slices.Clone(b)
		slices.Reverse(out)
		d.n++
		oid := fmt.Sprintf("out-%d", d.n)
		d.files[oid], d.names[oid] = out, "reversed.txt"
		size := int64(len(out))
		fv := draftFile{URI: d.uri(oid), Name: "reversed.txt", MIMEType: "text/plain", Size: &size, Digest: d.digest(out)}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "reversed"}}, StructuredContent: map[string]any{"result": fv}}, nil
	})
	// count takes a small file inline only.
	s.AddTool(&mcp.Tool{Name: "count", Description: "counts bytes", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"document": file("text/*", "inline")},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Document string }
		json.Unmarshal(req.Params.Arguments, &in)
		d.mu.Lock()
		d.args = append(d.args, string(req.Params.Arguments))
		d.mu.Unlock()
		header, payload, _ := strings.Cut(in.Document, ",")
		if header != "data:text/plain;base64" {
			return nil, &jsonrpc.Error{Code: -32602, Message: "want an RFC 2397 data: URI without parameters, got " + header}
		}
		b, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d bytes", len(b))}}}, nil
	})
	mcp.AddReceivingCustomMethod(s, "files/authorizeUpload", func(_ context.Context, _ *mcp.ServerSession, p *draftUploadParams) (*draftResult, error) {
		if p == nil || p.Size == nil || *p.Size > 1<<20 {
			return nil, &jsonrpc.Error{Code: -32602, Message: "too big", Data: json.RawMessage(`{"reason":"maxSizeExceeded","maxSize":1048576}`)}
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		d.n++
		id := fmt.Sprintf("in-%d", d.n)
		d.pending[id] = *p
		return &draftResult{File: draftFile{URI: d.uri(id), Name: p.Name, MIMEType: p.MIMEType, Size: p.Size, Digest: p.Digest},
			Upload: &draftDescriptor{Transport: "https", Method: "PUT", URL: d.ts.URL + "/blob/" + id + "?sig=" + secret(id),
				Headers: map[string]string{"Content-Type": p.MIMEType}, ExpiresAt: time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}}, nil
	})
	mcp.AddReceivingCustomMethod(s, "files/authorizeDownload", func(_ context.Context, _ *mcp.ServerSession, p *draftDownloadParams) (*draftResult, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		id, _ := strings.CutPrefix(p.URI, d.uri(""))
		b, ok := d.files[id]
		if !ok {
			return nil, &jsonrpc.Error{Code: -32602, Message: "unknown file", Data: json.RawMessage(`{"reason":"unknownFile"}`)}
		}
		size := int64(len(b))
		return &draftResult{File: draftFile{URI: p.URI, Name: d.names[id], MIMEType: "text/plain", Size: &size, Digest: d.digest(b)},
			Download: &draftDescriptor{Transport: "https", Method: "GET", URL: d.ts.URL + "/blob/" + id + "?sig=" + secret(id)}}, nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	mux.HandleFunc("/blob/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if r.URL.Query().Get("sig") != secret(id) {
			http.Error(w, "bad signature", http.StatusForbidden)
			return
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		switch r.Method {
		case http.MethodPut:
			p, ok := d.pending[id]
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
			if !ok || int64(len(b)) != *p.Size || p.Digest != nil && *d.digest(b) != *p.Digest {
				http.Error(w, `{"reason":"digestMismatch"}`, http.StatusUnprocessableEntity)
				return
			}
			delete(d.pending, id)
			d.files[id], d.names[id] = b, p.Name
			w.WriteHeader(http.StatusCreated)
		case http.MethodGet:
			b, ok := d.files[id]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Write(b)
		default:
			http.Error(w, "PUT or GET", http.StatusMethodNotAllowed)
		}
	})
	d.ts = httptest.NewServer(mux)
	t.Cleanup(d.ts.Close)
	return d
}

var sigKey = func() []byte { b := make([]byte, 16); rand.Read(b); return b }()

func secret(id string) string {
	sum := sha256.Sum256(append(slices.Clone(sigKey), id...))
	return hex.EncodeToString(sum[:8])
}

// The gateway moves a file both ways, by name, with a server that speaks
// only the draft: a path under its roots goes up through
// files/authorizeUpload (the field allows upload only) and comes back,
// reversed, through files/authorizeDownload, saved under --out; a small
// file goes inline where the field allows inline only, as a data: URI
// without a name parameter.
func TestDraftOnlyServerBothWays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := newDraftServer(t)
	root, out := t.TempDir(), t.TempDir()
	text := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 KB, over the inline limit
	text = append(text, "THE END"...)
	src := filepath.Join(root, "notes.txt")
	if err := os.WriteFile(src, text, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(ctx, gateway.Config{Agents: []gateway.Agent{{URL: d.ts.URL + "/mcp"}}, Roots: []string{root}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := connectHost(t, ctx, g)

	res, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: "reverse", Arguments: map[string]any{"document": src}})
	if err != nil {
		t.Fatal(err)
	}
	line := savedAs.FindStringSubmatch(resultText(res))
	if res.IsError || line == nil {
		t.Fatalf("reverse through the gateway: %q", resultText(res))
	}
	got, err := os.ReadFile(line[2])
	want := slices.Clone(text)
	slices.Reverse(want)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the reversed file saved as %s: %d bytes, %v; want the %d bytes reversed", line[2], len(got), err, len(want))
	}
	d.mu.Lock()
	arg := d.args[len(d.args)-1]
	d.mu.Unlock()
	if !strings.Contains(arg, `"mcp-file://draft.example/in-`) {
		t.Fatalf("the server got %s; want the file URI of its upload", arg)
	}
	if sc, _ := json.Marshal(res.StructuredContent); strings.Contains(string(sc), "mcp-file://") {
		t.Errorf("the host still sees the server's file URI: %s", sc)
	}

	small := filepath.Join(root, "small.txt")
	os.WriteFile(small, []byte("hello, draft"), 0o644)
	res, err = h.session.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: map[string]any{"document": small}})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "12 bytes") {
		t.Fatalf("count through the gateway: %v %q", err, resultText(res))
	}

	// Over the field's maxSize: refused by the gateway, nothing sent.
	big := filepath.Join(root, "big.txt")
	os.WriteFile(big, bytes.Repeat([]byte("x"), 1<<20+1), 0o644)
	d.mu.Lock()
	before := len(d.args)
	d.mu.Unlock()
	res, _ = h.session.CallTool(ctx, &mcp.CallToolParams{Name: "reverse", Arguments: map[string]any{"document": big}})
	if !res.IsError || !strings.Contains(resultText(res), "maxSize") {
		t.Fatalf("a file over maxSize: %q", resultText(res))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.args) != before || len(d.pending) != 0 {
		t.Fatalf("a refused file reached the server")
	}
}
