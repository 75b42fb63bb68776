// Package untrusted serves, for tests of `agentura check`, an MCP server
// one does not trust yet: a server that names URLs on another origin — a
// second local service standing for whatever sits beside a checker (a
// database's admin page, a cloud's metadata address) — and so would turn a
// checker that fetches what it is told into its way there. Where each URL
// of its answers lies is the test's choice (Lures); the other service
// records every request it receives, so a test can tell that none came.
//
// It is written from the contract's shapes (docs/contract.md) with the
// go-sdk server and net/http alone, not with agentura's code, like the
// servers of thirdparty and drafttest. Its one tool, "transform", takes a
// file marked x-file (any value: it fetches nothing) and announces one
// produced file, out.txt, with download_url, filename, mime_type,
// size_bytes and sha256, a resource_link and a "Tool produced:" line. Both
// origins serve out.txt at /files/out.txt with the contract's headers and
// its token; so the file and its URLs are right but for where they lie.
package untrusted

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

// Where a URL of the server's answers lies.
type Where int

// The places a lure may point.
const (
	// Own is the checked server's own origin.
	Own Where = iota
	// Other is the other service's origin.
	Other
	// Hop is the checked server's own origin, answering a request whose
	// token is right with 302 to the same file on the other origin.
	Hop
)

// Lures say where the server's answers point.
type Lures struct {
	// Download is where the tool's download_url lies.
	Download Where
	// Link is where its resource_link lies, unless SameLink: then the
	// resource_link is the download_url, wherever that lies.
	Link     Where
	SameLink bool
	// UploadDescriptor offers files/authorizeUpload, whose PUT descriptor
	// lies on the other origin.
	UploadDescriptor bool
	// DownloadDescriptor adds a FileValue to the tool's output and offers
	// files/authorizeDownload (not files/authorizeUpload), whose GET
	// descriptor lies on the other origin.
	DownloadDescriptor bool
}

// Content is the produced file's bytes; Token is its download token.
const (
	Content = "checked output, served on both origins\n"
	Token   = "tok-123"
)

// Server is a running untrusted server and the other service it points to.
type Server struct {
	// Endpoint is the server's MCP endpoint.
	Endpoint string
	// URL is the server's base URL.
	URL string
	// OtherURL is the other service's base URL; OtherHost its host:port,
	// as an allow list names it.
	OtherURL, OtherHost string

	mu      sync.Mutex
	reached []string
}

// Reached lists the requests the other service received ("GET /files/out.txt").
func (s *Server) Reached() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reached)
}

// Start serves the server and the other service on loopback until the
// test ends.
func Start(t testing.TB, l Lures) *Server {
	t.Helper()
	s := &Server{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reached = append(s.reached, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		if r.URL.Path == "/files/out.txt" {
			serveFile(w, r)
			return
		}
		w.WriteHeader(http.StatusCreated) // a descriptor's PUT "succeeds"
	}))
	t.Cleanup(other.Close)
	s.OtherURL, s.OtherHost = other.URL, strings.TrimPrefix(other.URL, "http://")

	mux := http.NewServeMux()
	mux.HandleFunc("/files/out.txt", serveFile)
	mux.HandleFunc("/hop/out.txt", func(w http.ResponseWriter, r *http.Request) {
		if !tokenRight(w, r) {
			return
		}
		http.Redirect(w, r, s.OtherURL+"/files/out.txt?token="+Token, http.StatusFound)
	})
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcpServer(l) }, nil))
	// Its URL is known before it accepts, so that handlers read it after it
	// was written.
	own := httptest.NewUnstartedServer(mux)
	s.URL = "http://" + own.Listener.Addr().String()
	s.Endpoint = s.URL + "/mcp"
	own.Start()
	t.Cleanup(own.Close)
	return s
}

// at is the URL of out.txt at w.
func (s *Server) at(w Where) string {
	switch w {
	case Other:
		return s.OtherURL + "/files/out.txt?token=" + Token
	case Hop:
		return s.URL + "/hop/out.txt?token=" + Token
	}
	return s.URL + "/files/out.txt?token=" + Token
}

// fileURI is the file URI of out.txt for the draft's methods.
const fileURI = "mcp-file://untrusted.example/out-1"

func (s *Server) mcpServer(l Lures) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "untrusted", Version: "1"}, nil)
	schema := json.RawMessage(`{"type": "object", "properties": {"source": {"type": "string", "description": "a text file", "x-file": true}}, "required": ["source"]}`)
	sum := sha256.Sum256([]byte(Content))
	size := int64(len(Content))
	srv.AddTool(&mcp.Tool{Name: "transform", Description: "transforms a text file", InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			download, link := s.at(l.Download), s.at(l.Link)
			if l.SameLink {
				link = download
			}
			produced := map[string]any{"download_url": download, "filename": "out.txt", "mime_type": "text/plain",
				"size_bytes": size, "sha256": hex.EncodeToString(sum[:])}
			if l.DownloadDescriptor {
				produced["file"] = map[string]any{"uri": fileURI, "name": "out.txt", "mimeType": "text/plain", "size": size,
					"digest": map[string]any{"algorithm": "sha-256", "value": base64.RawURLEncoding.EncodeToString(sum[:])}}
			}
			return &mcp.CallToolResult{
				Content: []mcp.Content{
					&mcp.TextContent{Text: fmt.Sprintf("Tool produced: out.txt (text, %d B) %s", size, download)},
					&mcp.ResourceLink{URI: link, Name: "out.txt", MIMEType: "text/plain", Size: &size},
				},
				StructuredContent: produced,
			}, nil
		})
	expires := func() string { return time.Now().Add(time.Minute).UTC().Format(time.RFC3339) }
	if l.UploadDescriptor {
		mcp.AddReceivingCustomMethod(srv, "files/authorizeUpload", func(_ context.Context, _ *mcp.ServerSession, p *uploadParams) (*draftResult, error) {
			return &draftResult{File: draftFile{URI: "mcp-file://untrusted.example/in-1", Name: p.Name, MIMEType: p.MIMEType, Size: p.Size, Digest: p.Digest},
				Upload: &descriptor{Transport: "https", Method: http.MethodPut, URL: s.OtherURL + "/blob/in-1", ExpiresAt: expires()}}, nil
		})
	}
	if l.DownloadDescriptor {
		if !l.UploadDescriptor { // JSON-RPC's answer; the go-sdk's own to a method it does not know is an HTTP 400
			mcp.AddReceivingCustomMethod(srv, "files/authorizeUpload", func(context.Context, *mcp.ServerSession, *uploadParams) (*draftResult, error) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
			})
		}
		mcp.AddReceivingCustomMethod(srv, "files/authorizeDownload", func(_ context.Context, _ *mcp.ServerSession, p *downloadParams) (*draftResult, error) {
			return &draftResult{File: draftFile{URI: p.URI, Name: "out.txt", MIMEType: "text/plain", Size: &size},
				Download: &descriptor{Transport: "https", Method: http.MethodGet, URL: s.OtherURL + "/files/out.txt?token=" + Token, ExpiresAt: expires()}}, nil
		})
	}
	return srv
}

// The draft's shapes (SEP-2631), as much of them as the server answers.
type (
	digest struct {
		Algorithm string `json:"algorithm"`
		Value     string `json:"value"`
	}
	draftFile struct {
		URI      string  `json:"uri"`
		Name     string  `json:"name,omitempty"`
		MIMEType string  `json:"mimeType,omitempty"`
		Size     *int64  `json:"size,omitempty"`
		Digest   *digest `json:"digest,omitempty"`
	}
	descriptor struct {
		Transport string `json:"transport"`
		Method    string `json:"method"`
		URL       string `json:"url"`
		ExpiresAt string `json:"expiresAt,omitempty"`
	}
	uploadParams struct {
		mcp.ParamsBase
		Name     string  `json:"name,omitempty"`
		MIMEType string  `json:"mimeType,omitempty"`
		Size     *int64  `json:"size,omitempty"`
		Digest   *digest `json:"digest,omitempty"`
	}
	downloadParams struct {
		mcp.ParamsBase
		URI string `json:"uri"`
	}
	draftResult struct {
		mcp.ResultBase
		File     draftFile   `json:"file"`
		Upload   *descriptor `json:"upload,omitempty"`
		Download *descriptor `json:"download,omitempty"`
	}
)

// tokenRight answers 403 with the contract's JSON reason unless r carries
// the token, and says whether it did.
func tokenRight(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Query().Get("token") == Token {
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	w.Write([]byte(`{"error": "bad or missing token"}`))
	return false
}

// serveFile serves out.txt as the contract says, to the right token.
func serveFile(w http.ResponseWriter, r *http.Request) {
	if !tokenRight(w, r) {
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Disposition", `attachment; filename="out.txt"`)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write([]byte(Content))
}
