package httpguard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/internal/lib/mcptrace"
)

// MCPPeekBytes is how much of a /mcp body MCP reads ahead to check it.
const MCPPeekBytes = 64 << 10

// MCP answers, in place of the go-sdk's terse replies, two mistakes
// with errors a model or its host can act on:
//   - a body over the limit (known from Content-Length) gets a JSON 413
//     saying to send large files through /uploads, not a text/plain one;
//   - a JSON-RPC message with an id but no method (neither a request nor a
//     response) gets a JSON-RPC "invalid request" error, not an empty 202.
func MCP(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > limit {
			httpjson.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request of %d bytes exceeds the limit of %d (AGENT_MAX_UPLOAD_BYTES as base64 plus 1 MiB); send large files by URL: POST them to /uploads and pass the signed URL it returns as the file's content", r.ContentLength, limit))
			return
		}
		head, err := io.ReadAll(io.LimitReader(r.Body, MCPPeekBytes+1))
		if err != nil {
			httpjson.WriteError(w, http.StatusBadRequest, "could not read the request body: "+err.Error())
			return
		}
		var m map[string]json.RawMessage // the one message of a body that fits the head
		if len(head) <= MCPPeekBytes && json.Unmarshal(head, &m) == nil && methodless(m) {
			WriteRPCError(w, http.StatusBadRequest, m["id"], -32600, `invalid request: the message has an "id" but no "method"; a request names its method, e.g. {"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			return
		}
		r.Body = ReadCloser{Reader: io.MultiReader(bytes.NewReader(head), r.Body), Closer: r.Body}
		mcptrace.ServeWithID(w, r, next, m["id"]) // its span records the id read here
	})
}

// ReadCloser is a body read from Reader (what was read ahead, then the
// rest) and closed by Closer (the original body).
type ReadCloser = mcptrace.ReadCloser

// methodless reports whether the message m has an id and neither a method
// nor a result or error: neither a request nor a response.
func methodless(m map[string]json.RawMessage) bool {
	_, hasID := m["id"]
	_, hasMethod := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	return hasID && !hasMethod && !hasResult && !hasError
}

// WriteRPCError answers with status and the JSON-RPC error code and msg of
// the message id (nil: none, for a body that cannot be read as JSON-RPC).
func WriteRPCError(w http.ResponseWriter, status int, id any, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}

// PartKindHint rewrites a2a-go's "unknown part kind " (no kind given) into
// an error that says what to send: the A2A specification's examples write
// "type", A2A v0.3 reads "kind".
type PartKindHint struct {
	http.ResponseWriter
	wrote bool
}

var (
	emptyPartKind = []byte(`unknown part kind "`)
	partKindText  = []byte(`unknown part kind: a part has no \"kind\"; give each part \"kind\": \"text\", \"file\" or \"data\" (A2A v0.3 calls it kind, not type)"`)
)

func (p *PartKindHint) Write(b []byte) (int, error) {
	if !p.wrote && len(b) < 4096 && bytes.Contains(b, emptyPartKind) {
		p.wrote = true
		p.Header().Del("Content-Length")
		if _, err := p.ResponseWriter.Write(bytes.Replace(b, emptyPartKind, partKindText, 1)); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	p.wrote = true
	return p.ResponseWriter.Write(b)
}

// Flush passes a flush on (message/stream).
func (p *PartKindHint) Flush() {
	if f, ok := p.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (p *PartKindHint) Unwrap() http.ResponseWriter { return p.ResponseWriter }
