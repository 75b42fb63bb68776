package mcptrace

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// The JSON-RPC id of a request (jsonrpc.request.id) is known to the
// go-sdk's transport alone: it hands a MethodHandler middleware the method
// and the params but not the id (it keeps it in the context under a key of
// its own, for its streamable transport). So the id is read where the
// message passes: on the server, by RequestIDs around the streamable HTTP
// handler; on the client, by the transport writing the request, which
// tells Client's span with RecordRequestID (the host side's transports of
// package client do). Over a transport that does neither (stdio on the
// server, in-memory) a span has no id.

// idPeekBytes is as much of a request body as RequestIDs reads to find
// its id; a body whose id comes later (after a longer params) gives none.
const idPeekBytes = 16 << 10

// maxIDBytes caps a string id recorded: it is the caller's text.
const maxIDBytes = 128

// requestIDs are the ids of the HTTP requests in flight that RequestIDs
// read, by their header map, which the go-sdk hands the request's
// handlers as RequestExtra.Header: the map itself, not a copy.
var requestIDs sync.Map // unsafe.Pointer (the map) → string

// headerKey identifies the header map h.
func headerKey(h http.Header) unsafe.Pointer { return reflect.ValueOf(h).UnsafePointer() }

// RequestIDs wraps a streamable MCP HTTP handler so that the server span
// of each request (Server) records its JSON-RPC id: it reads the id of a
// POST holding one message (not a batch) from the first 16 KiB of the body,
// which it hands on whole, and keeps it while the request is served. A
// client cannot set it: it is kept beside the request, not in it.
func RequestIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody || r.Header == nil {
			next.ServeHTTP(w, r)
			return
		}
		head, err := io.ReadAll(io.LimitReader(r.Body, idPeekBytes))
		r.Body = ReadCloser{Reader: io.MultiReader(bytes.NewReader(head), r.Body), Closer: r.Body}
		var id json.RawMessage
		if err == nil {
			id = peekID(head)
		}
		ServeWithID(w, r, next, id)
	})
}

// ServeWithID serves r with next, the JSON-RPC id of its one message (raw
// JSON, as a guard that has read the body's head found it) kept beside it
// for its server span (Server). A guard that reads the body anyway calls
// it in place of wrapping next in RequestIDs, so the body is read once.
func ServeWithID(w http.ResponseWriter, r *http.Request, next http.Handler, rawID json.RawMessage) {
	id := idText(rawID)
	if id == "" || r.Header == nil {
		next.ServeHTTP(w, r)
		return
	}
	key := headerKey(r.Header)
	requestIDs.Store(key, id)
	defer requestIDs.Delete(key)
	next.ServeHTTP(w, r)
}

// ReadCloser is a body read from Reader (what was read ahead, then the
// rest) and closed by Closer (the original body).
type ReadCloser struct {
	io.Reader
	io.Closer
}

// requestIDOf is the id RequestIDs kept for the HTTP request that carried
// req, "" for none.
func requestIDOf(req mcp.Request) string {
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return ""
	}
	id, _ := requestIDs.Load(headerKey(extra.Header))
	s, _ := id.(string)
	return s
}

// peekID is the raw id of the one JSON-RPC message body begins with,
// skipping the members before it; nil when body is no single message or
// its id comes after what body holds.
func peekID(body []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if name, _ := k.(string); strings.EqualFold(name, "id") {
			return v
		}
	}
	return nil
}

// idText is the raw JSON id as the conventions record it: a number's
// digits, a string's text (capped), "" for null or anything else.
func idText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return Truncate(s, maxIDBytes)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
			return ""
		}
		return string(raw)
	}
	return ""
}

// clientSpanKey keys the recording client span of a request in the
// context its transport writes it under.
type clientSpanKey struct{}

// RecordRequestID records id on the client span of the request being
// written under ctx (Client's); a transport that writes requests calls
// it. id is the raw JSON of the id as the request went out
// (json.RawMessage), or the id the go-sdk holds (jsonrpc.ID, or its Raw:
// an int64 or a string). Without such a span (tracing off, or a request
// not sent through Client) it does nothing.
func RecordRequestID(ctx context.Context, id any) {
	span, ok := ctx.Value(clientSpanKey{}).(trace.Span)
	if !ok || !span.IsRecording() {
		return
	}
	if raw, ok := id.(interface{ Raw() any }); ok {
		id = raw.Raw()
	}
	var s string
	switch v := id.(type) {
	case json.RawMessage:
		s = idText(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case string:
		s = Truncate(v, maxIDBytes)
	}
	if s != "" {
		span.SetAttributes(AttrRequestID.String(s))
	}
}
