package mcpbind

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/transfer/mcpfile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The draft MCP file contract's methods (SEP-2631) on the MCP server: the
// files themselves are the transport's (internal/transport).

// fileCallerKey carries the caller of a files/* request from the
// middleware to the handlers (the go-sdk hands custom methods no request).
type fileCallerKey struct{}

// serveFileTransfer answers the draft's files/authorizeUpload and
// files/authorizeDownload, whatever capabilities the client declared (the
// reference host declares none).
func (s *Server) serveFileTransfer() {
	err := errors.Join(
		mcp.AddReceivingCustomMethod(s.mcp, mcpfile.MethodAuthorizeUpload, func(ctx context.Context, _ *mcp.ServerSession, p *uploadParams) (mcp.Result, error) {
			p = cmp.Or(p, &uploadParams{})
			return wrapFileResult(s.FileURIs.AuthorizeUpload(ctx, fileCaller(ctx), p.AuthorizeUploadParams))
		}),
		mcp.AddReceivingCustomMethod(s.mcp, mcpfile.MethodAuthorizeDownload, func(ctx context.Context, _ *mcp.ServerSession, p *downloadParams) (mcp.Result, error) {
			p = cmp.Or(p, &downloadParams{})
			return wrapFileResult(s.FileURIs.AuthorizeDownload(ctx, fileCaller(ctx), p.URI))
		}),
	)
	if err != nil {
		panic(fmt.Sprintf("agentcore: serve the file methods: %v", err)) // a name clash is a programming error
	}
	s.mcp.AddReceivingMiddleware(fileBlocks)
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "files/") {
				ctx = context.WithValue(ctx, fileCallerKey{}, ownerOfExtra(req.GetExtra()))
				if !s.Callers.Authenticated() {
					scope, err := s.listScope(req, readMeta(req))
					if err != nil {
						return nil, err
					}
					ctx = calls.WithFileScope(ctx, scope)
				}
			}
			return next(ctx, method, req)
		}
	})
}

// fileBlocks adds to the tools/call result of a client that declared the
// draft's files capability (§2; on 2026-07-28, in the request's client
// capabilities) a content block {"type": "file", "file": FileValue} (§8)
// for each produced file, beside its FileValue in structuredContent. The
// go-sdk knows no such content type, so the blocks are added to the
// result as it is written. (A 2025-11-25 session's initialize
// capabilities are not kept by the go-sdk: such a client reads the
// FileValues of structuredContent.)
func fileBlocks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" || err != nil || !readMeta(req).files {
			return res, err
		}
		ctr, ok := res.(*mcp.CallToolResult)
		if !ok || ctr.IsError {
			return res, err
		}
		files := fileValues(ctr.StructuredContent)
		if len(files) == 0 {
			return res, err
		}
		return &patchedResult{Result: res, patch: func(m map[string]any) {
			content, _ := m["content"].([]any)
			for _, f := range files {
				content = append(content, map[string]any{"type": mcpfile.ContentTypeFile, "file": f})
			}
			m["content"] = content
		}}, nil
	}
}

// fileValues finds the FileValues of a tool result's structured content:
// its "file" (one produced file), or each of its "files"' "file".
func fileValues(structured any) []any {
	b, err := json.Marshal(structured)
	if err != nil {
		return nil
	}
	var sc struct {
		File  any `json:"file"`
		Files []struct {
			File any `json:"file"`
		} `json:"files"`
	}
	if json.Unmarshal(b, &sc) != nil {
		return nil
	}
	var out []any
	if sc.File != nil {
		out = append(out, sc.File)
	}
	for _, f := range sc.Files {
		if f.File != nil {
			out = append(out, f.File)
		}
	}
	return out
}

func fileCaller(ctx context.Context) string {
	if o, _ := ctx.Value(fileCallerKey{}).(string); o != "" {
		return o
	}
	return calls.AnonymousOwner
}

// uploadParams are the params of files/authorizeUpload as the go-sdk
// decodes them.
type uploadParams struct {
	mcp.ParamsBase
	mcpfile.AuthorizeUploadParams
}

// downloadParams are the params of files/authorizeDownload.
type downloadParams struct {
	mcp.ParamsBase
	mcpfile.AuthorizeDownloadParams
}

// wire is a result of the draft's shapes, written as they are.
type wire[T any] struct {
	mcp.ResultBase
	v T
}

// MarshalJSON writes the value, with _meta when there is one.
func (w *wire[T]) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(w.v)
	if err != nil || len(w.Meta) == 0 {
		return b, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["_meta"] = w.Meta
	return json.Marshal(m)
}

// wrapFileResult is a draft result v, or its error, as the go-sdk sends it.
func wrapFileResult[T any](v *T, err error) (mcp.Result, error) {
	if err != nil {
		return nil, err
	}
	return &wire[T]{v: *v}, nil
}
