package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/transfer/mcpfile"
)

// The draft MCP file contract's client capability (SEP-2631 at c3cf0eba,
// §2): a client that moves file bytes out of band declares
// capabilities.files {upload, download, transports}. The host side speaks
// the draft (files/authorizeUpload, files/authorizeDownload, FileValues,
// file content blocks), so it says so: a server that waits for the
// declaration before offering file transfer sees a host that has it.
//
// The go-sdk's ClientCapabilities has no field for it, and takes none it
// does not know, so it is added where the capabilities travel:
//   - on 2026-07-28 every request carries the client's capabilities in its
//     _meta (and so does server/discover): the sending middleware of
//     DeclareFiles adds files there;
//   - on older revisions the capabilities go once, in initialize, as a typed
//     struct: the middleware marks the request's context, and the layer
//     that writes the message adds files to it — the HTTP client of
//     WithTasks over streamable HTTP, the connection of ReadableTransport
//     over any other transport (both of which every host of this module
//     uses already).

// FilesCapability is the capabilities.files the host side declares: it
// uploads and downloads out of band, over https (the one transport of the
// draft).
func FilesCapability() mcpfile.ClientCapability {
	return mcpfile.ClientCapability{Upload: true, Download: true, Transports: []string{mcpfile.TransportHTTPS}}
}

// DeclareFiles makes c declare FilesCapability on every revision (see
// above: on revisions before 2026-07-28 its transport needs an HTTP client
// from WithTasks, or ReadableTransport). RegisterFileMethods calls it;
// calling it again is harmless (the declaration is the same).
func DeclareFiles(c *mcp.Client) {
	c.AddSendingMiddleware(declareFiles)
}

// declareFilesKey marks the context of an initialize whose capabilities
// are to declare files.
type declareFilesKey struct{}

func declareFiles(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			ctx = context.WithValue(ctx, declareFilesKey{}, true)
		}
		if p := req.GetParams(); p != nil && !nilPointer(p) {
			if meta := p.GetMeta(); meta != nil {
				if caps, ok := meta[mcp.MetaKeyClientCapabilities]; ok {
					meta[mcp.MetaKeyClientCapabilities] = withFiles(caps)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// nilPointer reports whether v is a nil pointer in an interface.
func nilPointer(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// withFiles returns the capabilities caps (as the go-sdk put them in a
// request's _meta) with files added, as a JSON object.
func withFiles(caps any) map[string]any {
	var m map[string]any
	if b, err := json.Marshal(caps); err == nil {
		json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	m[mcpfile.CapabilityFiles] = FilesCapability()
	return m
}

// declaresFiles reports whether ctx is that of an initialize that declares
// files.
func declaresFiles(ctx context.Context) bool {
	v, _ := ctx.Value(declareFilesKey{}).(bool)
	return v
}

// initializeParamsWithFiles returns the params of an initialize request
// with capabilities.files added; ok is false when they are not an object
// with an object of capabilities.
func initializeParamsWithFiles(params json.RawMessage) (json.RawMessage, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params, false
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(p["capabilities"], &caps) != nil {
		return params, false
	}
	if caps == nil {
		caps = map[string]json.RawMessage{}
	}
	files, _ := json.Marshal(FilesCapability())
	caps[mcpfile.CapabilityFiles] = files
	var err error
	if p["capabilities"], err = json.Marshal(caps); err != nil {
		return params, false
	}
	out, err := json.Marshal(p)
	if err != nil {
		return params, false
	}
	return out, true
}

// declareFilesHTTP returns req with capabilities.files added to the
// initialize it posts, when its context asks for it (DeclareFiles);
// otherwise req itself.
func declareFilesHTTP(req *http.Request) *http.Request {
	if !declaresFiles(req.Context()) || req.Method != http.MethodPost || req.GetBody == nil {
		return req
	}
	rc, err := req.GetBody()
	if err != nil {
		return req
	}
	body, err := io.ReadAll(io.LimitReader(rc, 1<<20)) // an initialize is small
	rc.Close()
	if err != nil {
		return req
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || string(msg["method"]) != `"initialize"` {
		return req
	}
	params, ok := initializeParamsWithFiles(msg["params"])
	if !ok {
		return req
	}
	msg["params"] = params
	if body, err = json.Marshal(msg); err != nil { // id and method stay before params (sorted keys)
		return req
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	return out
}

// declareFilesMessage adds capabilities.files to msg when it is an
// initialize whose context asks for it (DeclareFiles).
func declareFilesMessage(ctx context.Context, msg jsonrpc.Message) {
	r, ok := msg.(*jsonrpc.Request)
	if !ok || r.Method != "initialize" || !declaresFiles(ctx) {
		return
	}
	if params, ok := initializeParamsWithFiles(r.Params); ok {
		r.Params = params
	}
}
