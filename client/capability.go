package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

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
//     _meta (and so does server/discover); on older revisions they go once,
//     in initialize, as a typed struct. Either way the sending middleware
//     of DeclareFiles marks the request's context, and the layer that
//     writes the message adds files to it — the HTTP client of WithTasks
//     over streamable HTTP, the connection of ReadableTransport over any
//     other transport (both of which every host of this module uses
//     already). That layer is also the one that turns the draft's file
//     content blocks into blocks the go-sdk reads, so a session without it
//     declares nothing and is sent no block it would refuse.

// FilesCapability is the capabilities.files the host side declares: it
// uploads and downloads out of band, over https (the one transport of the
// draft).
func FilesCapability() mcpfile.ClientCapability {
	return mcpfile.ClientCapability{Upload: true, Download: true, Transports: []string{mcpfile.TransportHTTPS}}
}

// DeclareFiles makes c declare FilesCapability on every revision, over a
// transport that can read what a server sends a client that declares it
// (see above: an HTTP client from WithTasks, or ReadableTransport). RegisterFileMethods calls it;
// calling it again is harmless (the declaration is the same).
func DeclareFiles(c *mcp.Client) {
	c.AddSendingMiddleware(declareFiles)
}

// declareFilesKey marks the context of a request whose capabilities are
// to declare files.
type declareFilesKey struct{}

func declareFiles(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		return next(context.WithValue(ctx, declareFilesKey{}, true), method, req)
	}
}

// withFiles returns the capabilities caps with files added, as a JSON
// object.
func withFiles(caps []byte) ([]byte, bool) {
	var m map[string]json.RawMessage
	if len(caps) > 0 && (json.Unmarshal(caps, &m) != nil || m == nil) {
		return caps, false
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	files, _ := json.Marshal(FilesCapability())
	m[mcpfile.CapabilityFiles] = files
	out, err := json.Marshal(m)
	return out, err == nil
}

// declaresFiles reports whether ctx is that of a request that declares
// files.
func declaresFiles(ctx context.Context) bool {
	v, _ := ctx.Value(declareFilesKey{}).(bool)
	return v
}

// paramsWithFiles returns the params of a request with capabilities.files
// added where the client's capabilities travel: an initialize's
// "capabilities", a 2026-07-28 request's _meta clientCapabilities; ok is
// false when there are none to add to.
func paramsWithFiles(method string, params json.RawMessage) (json.RawMessage, bool) {
	if method == "initialize" {
		return rewriteMember(params, "capabilities", withFiles)
	}
	return rewriteMember(params, "_meta", func(meta []byte) ([]byte, bool) {
		return rewriteMember(meta, mcp.MetaKeyClientCapabilities, func(caps []byte) ([]byte, bool) {
			if caps == nil {
				return caps, false
			}
			return withFiles(caps)
		})
	})
}

// declareFilesHTTP returns req with capabilities.files added to the
// request it posts (paramsWithFiles), when its context asks for it
// (DeclareFiles); otherwise req itself.
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
	var msg struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == "" {
		return req
	}
	body, ok := rewriteMember(body, "params", func(params []byte) ([]byte, bool) { // id and method stay before params (sorted keys)
		return paramsWithFiles(msg.Method, params)
	})
	if !ok {
		return req
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	return out
}

// declareFilesMessage adds capabilities.files to msg when its context asks
// for it (DeclareFiles).
func declareFilesMessage(ctx context.Context, msg jsonrpc.Message) {
	r, ok := msg.(*jsonrpc.Request)
	if !ok || !declaresFiles(ctx) {
		return
	}
	if params, ok := paramsWithFiles(r.Method, r.Params); ok {
		r.Params = params
	}
}
