// Package drafttest is a third-party MCP server that speaks only the draft
// MCP file contract (SEP-2631 at modelcontextprotocol commit c3cf0eba),
// written from the draft's shapes with the go-sdk server and net/http alone:
// none of agentura's packages, so that a host tested against it is tested
// against the draft, not against agentura's reading of it. File inputs are
// URI strings declared by an x-mcp-file object; uploads go through
// files/authorizeUpload and a PUT descriptor; outputs are FileValues
// resolved by files/authorizeDownload.
//
// Its tools:
//   - reverse {document}: takes a text file by upload only (maxSize 1 MiB)
//     and answers its bytes reversed as a FileValue, reversed.txt, under
//     structuredContent.result;
//   - count {document}: takes a small text file inline only, as an RFC 2397
//     data: URI without parameters, and answers "<n> bytes".
package drafttest

import (
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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxSize is the maxSize of every file field of the server, and the most
// files/authorizeUpload takes.
const MaxSize = 1 << 20

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

// Server keeps files by id: what hosts uploaded and what its tool made.
type Server struct {
	// URL is its base URL, where the blobs of its descriptors lie.
	URL string

	ts      *httptest.Server
	mu      sync.Mutex
	files   map[string][]byte
	pending map[string]draftUploadParams
	names   map[string]string
	args    []string // the tools' arguments as they arrived
	n       int
}

// Endpoint is its MCP endpoint (streamable HTTP).
func (d *Server) Endpoint() string { return d.URL + "/mcp" }

// URI is the file URI of the file id: "in-<n>" for an upload,
// "out-<n>" for a produced file.
func (d *Server) URI(id string) string { return "mcp-file://draft.example/" + id }

// Args are the arguments of each tool call, as they arrived.
func (d *Server) Args() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.args)
}

// Pending is how many authorized uploads have not received their bytes.
func (d *Server) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pending)
}

func (d *Server) digest(b []byte) *draftDigest {
	sum := sha256.Sum256(b)
	return &draftDigest{Algorithm: "sha-256", Value: base64.RawURLEncoding.EncodeToString(sum[:])}
}

// Start serves a draft-only server on loopback until the test ends.
func Start(t testing.TB) *Server {
	d := &Server{files: map[string][]byte{}, pending: map[string]draftUploadParams{}, names: map[string]string{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "draft-only", Version: "1"}, nil)
	file := func(accept string, modes ...string) map[string]any {
		return map[string]any{"type": "string", "format": "uri",
			"x-mcp-file": map[string]any{"accept": []string{accept}, "maxSize": MaxSize, "transferModes": modes}}
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
		id, ok := strings.CutPrefix(in.Document, d.URI(""))
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
		fv := draftFile{URI: d.URI(oid), Name: "reversed.txt", MIMEType: "text/plain", Size: &size, Digest: d.digest(out)}
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
		if p == nil || p.Size == nil || *p.Size > MaxSize {
			return nil, &jsonrpc.Error{Code: -32602, Message: "too big", Data: json.RawMessage(fmt.Sprintf(`{"reason":"maxSizeExceeded","maxSize":%d}`, MaxSize))}
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		d.n++
		id := fmt.Sprintf("in-%d", d.n)
		d.pending[id] = *p
		return &draftResult{File: draftFile{URI: d.URI(id), Name: p.Name, MIMEType: p.MIMEType, Size: p.Size, Digest: p.Digest},
			Upload: &draftDescriptor{Transport: "https", Method: "PUT", URL: d.URL + "/blob/" + id + "?sig=" + secret(id),
				Headers: map[string]string{"Content-Type": p.MIMEType}, ExpiresAt: time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}}, nil
	})
	mcp.AddReceivingCustomMethod(s, "files/authorizeDownload", func(_ context.Context, _ *mcp.ServerSession, p *draftDownloadParams) (*draftResult, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		id, _ := strings.CutPrefix(p.URI, d.URI(""))
		b, ok := d.files[id]
		if !ok {
			return nil, &jsonrpc.Error{Code: -32602, Message: "unknown file", Data: json.RawMessage(`{"reason":"unknownFile"}`)}
		}
		size := int64(len(b))
		return &draftResult{File: draftFile{URI: p.URI, Name: d.names[id], MIMEType: "text/plain", Size: &size, Digest: d.digest(b)},
			Download: &draftDescriptor{Transport: "https", Method: "GET", URL: d.URL + "/blob/" + id + "?sig=" + secret(id)}}, nil
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
			b, _ := io.ReadAll(io.LimitReader(r.Body, MaxSize+1))
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
	d.URL = d.ts.URL
	t.Cleanup(d.ts.Close)
	return d
}

var sigKey = func() []byte { b := make([]byte, 16); rand.Read(b); return b }()

func secret(id string) string {
	sum := sha256.Sum256(append(slices.Clone(sigKey), id...))
	return hex.EncodeToString(sum[:8])
}
