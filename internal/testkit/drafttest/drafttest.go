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
//     structuredContent.result (or, with Options.FileBlock, in a §8 file
//     content block);
//   - count {document}: takes a small text file inline only, as an RFC 2397
//     data: URI of a text/* type without parameters, and answers "<n>
//     bytes".
//
// It keeps what the draft asks of a server: an upload's bytes must match
// the size and digest declared at files/authorizeUpload (§6), a descriptor
// works until its expiresAt and not after (the draft's security section:
// time-limited), a file URI it does not know is refused with a JSON-RPC
// error (§8, §10). Options break it one point at a time, for the tests of
// `agentura check --standard`.
package drafttest

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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxSize is the maxSize of every file field of the server, and the most
// files/authorizeUpload takes, unless Options.MaxSize says otherwise.
const MaxSize = 1 << 20

// Options say how the server is served and where it departs from the
// draft; the zero value is the draft kept, over 2025-11-25 with sessions.
type Options struct {
	// Stateless serves 2026-07-28 alone, without sessions (server/discover,
	// the client's capabilities in each request's _meta).
	Stateless bool
	// FileBlock: reverse answers its FileValue in a {"type": "file"}
	// content block (§8) instead of under structuredContent.
	FileBlock bool
	// ShortLived is a file name prefix: the upload descriptor of a file
	// so named lasts one to two seconds (its expiresAt in whole seconds), so
	// that a test may see an expired one refused without waiting long.
	ShortLived string
	// DescriptorBase is the base URL its descriptors point to instead of
	// its own (another service's, which a host must not follow unless its
	// user allows the host).
	DescriptorBase string

	// The deviations, one point each.

	// WrongDigest: produced files state a digest that is not their
	// bytes' (in the tool's FileValue and in files/authorizeDownload).
	WrongDigest bool
	// WrongSize: produced files state a size one byte larger than theirs.
	WrongSize bool
	// MarkerOnObject: count's document is declared {"type": "object"},
	// its x-mcp-file on a property that is no URI string (§5), though it
	// takes the data: URI as ever.
	MarkerOnObject bool
	// AcceptExpired: an upload to a descriptor past its expiresAt is
	// taken.
	AcceptExpired bool
	// IgnoreDigest: an upload whose bytes do not match the digest declared
	// at files/authorizeUpload is taken (§6 says to reject it).
	IgnoreDigest bool

	// MaxSize replaces the package's MaxSize as the server's maxSize
	// (0 keeps it).
	MaxSize int
}

// maxSize is the maxSize of every file field of d.
func (d *Server) maxSize() int {
	if d.o.MaxSize > 0 {
		return d.o.MaxSize
	}
	return MaxSize
}

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

// fileBlock is the §8 content block {"type": "file", "file": FileValue},
// which the go-sdk has no type for: it lends the block its Content
// interface through an embedded TextContent, and writes the block itself.
type fileBlock struct {
	*mcp.TextContent
	file draftFile
}

// MarshalJSON writes the §8 block.
func (b *fileBlock) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"type": "file", "file": b.file})
}

// upload is a descriptor handed out by files/authorizeUpload, not yet used.
type upload struct {
	params  draftUploadParams
	expires time.Time
}

// Server keeps files by id: what hosts uploaded and what its tool made.
type Server struct {
	// URL is its base URL, where the blobs of its descriptors lie.
	URL string

	o       Options
	ts      *httptest.Server
	mu      sync.Mutex
	files   map[string][]byte
	pending map[string]upload
	names   map[string]string
	args    []string // the tools' arguments as they arrived
	caps    []string // the files capability of each request, as it arrived ("" for none)
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

// FilesDeclared lists, for each request a host posted, the files
// capability it declared (§2), as compact JSON: initialize's
// capabilities.files, or the files of the client capabilities in the
// request's _meta (2026-07-28); "" for a request that declared none.
// Notifications are left out.
func (d *Server) FilesDeclared() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.caps)
}

// digest is the draft's sha-256 digest of b (with WrongDigest, of other
// bytes).
func (d *Server) digest(b []byte) *draftDigest {
	if d.o.WrongDigest {
		b = append(slices.Clone(b), '!')
	}
	return digestOf(b)
}

func digestOf(b []byte) *draftDigest {
	sum := sha256.Sum256(b)
	return &draftDigest{Algorithm: "sha-256", Value: base64.RawURLEncoding.EncodeToString(sum[:])}
}

// fileValue is the FileValue of a produced file.
func (d *Server) fileValue(id string) draftFile {
	b := d.files[id]
	size := int64(len(b))
	if d.o.WrongSize {
		size++
	}
	return draftFile{URI: d.URI(id), Name: d.names[id], MIMEType: "text/plain", Size: &size, Digest: d.digest(b)}
}

// blobs is the base URL of its descriptors.
func (d *Server) blobs() string {
	if d.o.DescriptorBase != "" {
		return d.o.DescriptorBase
	}
	return d.URL
}

// Start serves a draft-only server on loopback until the test ends.
func Start(t testing.TB) *Server { return StartWith(t, Options{}) }

// StartWith serves a server as o says on loopback until the test ends.
func StartWith(t testing.TB, o Options) *Server {
	d := &Server{o: o, files: map[string][]byte{}, pending: map[string]upload{}, names: map[string]string{}}
	var sopts *mcp.ServerOptions
	if o.Stateless {
		sopts = &mcp.ServerOptions{SupportedProtocolVersions: []string{"2026-07-28"}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "draft-only", Version: "1"}, sopts)
	file := func(accept string, modes ...string) map[string]any {
		return map[string]any{"type": "string", "format": "uri",
			"x-mcp-file": map[string]any{"accept": []string{accept}, "maxSize": d.maxSize(), "transferModes": modes}}
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
		fv := d.fileValue(oid)
		if o.FileBlock {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "reversed"}, &fileBlock{TextContent: &mcp.TextContent{}, file: fv}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "reversed"}}, StructuredContent: map[string]any{"result": fv}}, nil
	})
	// count takes a small text file inline only.
	countDoc := file("text/*", "inline")
	if o.MarkerOnObject {
		countDoc["type"] = "object"
		delete(countDoc, "format")
	}
	s.AddTool(&mcp.Tool{Name: "count", Description: "counts bytes", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"document": countDoc},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Document string }
		json.Unmarshal(req.Params.Arguments, &in)
		d.mu.Lock()
		d.args = append(d.args, string(req.Params.Arguments))
		d.mu.Unlock()
		header, payload, _ := strings.Cut(in.Document, ",")
		mimeType, ok := strings.CutSuffix(strings.TrimPrefix(header, "data:"), ";base64")
		if !strings.HasPrefix(header, "data:") || !ok || !strings.HasPrefix(mimeType, "text/") || strings.Contains(mimeType, ";") {
			return nil, &jsonrpc.Error{Code: -32602, Message: "want an RFC 2397 data: URI of a text/* type without parameters, got " + header}
		}
		b, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return nil, err
		}
		if len(b) > d.maxSize() {
			return nil, &jsonrpc.Error{Code: -32602, Message: "too big", Data: json.RawMessage(fmt.Sprintf(`{"reason":"maxSizeExceeded","maxSize":%d,"actualSize":%d}`, d.maxSize(), len(b)))}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d bytes", len(b))}}}, nil
	})
	mcp.AddReceivingCustomMethod(s, "files/authorizeUpload", func(_ context.Context, _ *mcp.ServerSession, p *draftUploadParams) (*draftResult, error) {
		if p == nil || p.Size == nil || *p.Size > int64(d.maxSize()) {
			return nil, &jsonrpc.Error{Code: -32602, Message: "too big", Data: json.RawMessage(fmt.Sprintf(`{"reason":"maxSizeExceeded","maxSize":%d}`, d.maxSize()))}
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		d.n++
		id := fmt.Sprintf("in-%d", d.n)
		ttl := time.Minute
		if o.ShortLived != "" && strings.HasPrefix(p.Name, o.ShortLived) {
			ttl = 2 * time.Second // truncated below: 1–2 s left, not 0–1 s that a busy machine uses up before the check reads it
		}
		expires := time.Now().Add(ttl).Truncate(time.Second)
		d.pending[id] = upload{params: *p, expires: expires}
		return &draftResult{File: draftFile{URI: d.URI(id), Name: p.Name, MIMEType: p.MIMEType, Size: p.Size, Digest: p.Digest},
			Upload: &draftDescriptor{Transport: "https", Method: "PUT", URL: d.blobs() + "/blob/" + id + "?sig=" + secret(id),
				Headers: map[string]string{"Content-Type": p.MIMEType}, ExpiresAt: expires.UTC().Format(time.RFC3339)}}, nil
	})
	mcp.AddReceivingCustomMethod(s, "files/authorizeDownload", func(_ context.Context, _ *mcp.ServerSession, p *draftDownloadParams) (*draftResult, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		id, _ := strings.CutPrefix(p.URI, d.URI(""))
		if _, ok := d.files[id]; !ok {
			return nil, &jsonrpc.Error{Code: -32602, Message: "unknown file", Data: json.RawMessage(`{"reason":"unknownFile"}`)}
		}
		return &draftResult{File: d.fileValue(id),
			Download: &draftDescriptor{Transport: "https", Method: "GET", URL: d.blobs() + "/blob/" + id + "?sig=" + secret(id),
				ExpiresAt: time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}}, nil
	})
	mux := http.NewServeMux()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: o.Stateless,
		// A request carries a file up to maxSize inline: base64 and JSON
		// around it.
		MaxRequestBodyBytes: max(mcp.DefaultMaxRequestBodyBytes, int64(d.maxSize())*4/3+1<<20)})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 4*int64(d.maxSize())))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			d.recordCapability(body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	})
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
			up, ok := d.pending[id]
			if !ok {
				http.Error(w, `{"reason":"unknownUpload"}`, http.StatusNotFound)
				return
			}
			if time.Now().After(up.expires) && !o.AcceptExpired {
				http.Error(w, `{"reason":"descriptorExpired"}`, http.StatusForbidden)
				return
			}
			b, _ := io.ReadAll(io.LimitReader(r.Body, int64(d.maxSize())+1))
			p := up.params
			if int64(len(b)) != *p.Size {
				http.Error(w, `{"reason":"sizeMismatch"}`, http.StatusUnprocessableEntity)
				return
			}
			if p.Digest != nil && *digestOf(b) != *p.Digest && !o.IgnoreDigest {
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
	// The URL is known before the server accepts, so that handlers read it
	// after it was written.
	d.ts = httptest.NewUnstartedServer(mux)
	d.URL = "http://" + d.ts.Listener.Addr().String()
	d.ts.Start()
	t.Cleanup(d.ts.Close)
	return d
}

// recordCapability notes the files capability a request declares.
func (d *Server) recordCapability(body []byte) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
			Meta         map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.ID == nil {
		return
	}
	files := msg.Params.Capabilities["files"]
	if files == nil {
		var caps map[string]json.RawMessage
		json.Unmarshal(msg.Params.Meta["io.modelcontextprotocol/clientCapabilities"], &caps)
		files = caps["files"]
	}
	var compact bytes.Buffer
	json.Compact(&compact, files)
	d.mu.Lock()
	d.caps = append(d.caps, compact.String())
	d.mu.Unlock()
}

var sigKey = func() []byte { b := make([]byte, 16); rand.Read(b); return b }()

func secret(id string) string {
	sum := sha256.Sum256(append(slices.Clone(sigKey), id...))
	return hex.EncodeToString(sum[:8])
}
