// Package thirdparty serves an MCP server of someone else's for tests of
// hosts (the client package, the CLI): the go-sdk's own server and
// streamable HTTP handler, speaking only the revisions a test names, with
// none of agentura's endpoints (no /uploads, no /files/). Its two tools take
// a file marked x-file, so a host must send it inline: "size" answers what
// it got, "reverse" hands the file back reversed as an embedded resource.
// It records the method and revision of each request, so that a test can
// tell what its host negotiated.
package thirdparty

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Request is what the server saw of one JSON-RPC message a host posted.
type Request struct {
	// Method is the JSON-RPC method.
	Method string
	// Revision is the request's MCP-Protocol-Version header, "" if none.
	Revision string
	// Asked is the protocolVersion an initialize asked for, else "".
	Asked string
}

// Server is a running third-party MCP server.
type Server struct {
	// Endpoint is its MCP endpoint (its URL + "/mcp").
	Endpoint string

	mu   sync.Mutex
	seen []Request
}

// Start serves a server speaking only revisions (the first is the newest
// it prefers), statelessly or with sessions; it stops when the test ends.
func Start(t testing.TB, stateless bool, revisions ...string) *Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "third-party", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: revisions})
	// x-file is spelled out, as a server of someone else's writes it from
	// the contract (docs/contract.md), not with agentura's code.
	schema := json.RawMessage(`{"type": "object", "properties": {"source": {"type": "string", "x-file": true}}, "required": ["source"]}`)
	srv.AddTool(&mcp.Tool{Name: "size", Description: "says what file it got", InputSchema: schema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			source, err := sourceOf(req)
			if err != nil {
				return toolError(err.Error()), nil
			}
			if !strings.HasPrefix(source, "data:") {
				return toolError("not sent inline: " + source), nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "got " + source[:min(len(source), 30)]}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "reverse", Description: "hands back the file reversed, embedded", InputSchema: schema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			source, err := sourceOf(req)
			if err != nil {
				return toolError(err.Error()), nil
			}
			mimeType, name, data, err := decodeDataURI(source)
			if err != nil {
				return toolError(err.Error()), nil
			}
			slices.Reverse(data)
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: fmt.Sprintf("reversed %d bytes", len(data))},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://third-party/reversed-" + url.PathEscape(name), MIMEType: mimeType, Blob: data}},
			}}, nil
		})
	s := &Server{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			s.record(r.Header.Get("Mcp-Protocol-Version"), body)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	s.Endpoint = hs.URL + "/mcp"
	return s
}

// Requests returns the requests and notifications seen so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// record notes the message of a POST body (a batch is left out: no
// revision of today sends one).
func (s *Server) record(revision string, body []byte) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == "" {
		return
	}
	req := Request{Method: msg.Method, Revision: revision}
	if msg.Method == "initialize" {
		req.Asked = msg.Params.ProtocolVersion
	}
	s.mu.Lock()
	s.seen = append(s.seen, req)
	s.mu.Unlock()
}

// sourceOf reads the "source" argument of a call.
func sourceOf(req *mcp.CallToolRequest) (string, error) {
	var in struct{ Source string }
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return "", fmt.Errorf("arguments: %w", err)
	}
	return in.Source, nil
}

// toolError is a tool's failure as the model reads it.
func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// decodeDataURI reads a base64 data URI (RFC 2397) with an optional name
// parameter, as a host sends a file inline, written here from the RFC's
// shape rather than with agentura's code.
func decodeDataURI(source string) (mimeType, name string, data []byte, err error) {
	head, payload, ok := strings.Cut(strings.TrimPrefix(source, "data:"), ",")
	params := strings.Split(head, ";")
	if !strings.HasPrefix(source, "data:") || !ok || params[len(params)-1] != "base64" {
		return "", "", nil, fmt.Errorf("the source is not sent inline as a base64 data URI: %.40s", source)
	}
	mimeType = params[0]
	for _, p := range params[1 : len(params)-1] {
		if v, ok := strings.CutPrefix(p, "name="); ok {
			if name, err = url.PathUnescape(v); err != nil {
				return "", "", nil, fmt.Errorf("the data URI's name %q: %w", v, err)
			}
		}
	}
	if data, err = base64.StdEncoding.DecodeString(payload); err != nil {
		return "", "", nil, fmt.Errorf("the data URI's payload: %w", err)
	}
	return mimeType, name, data, nil
}
