package mcpbind

import (
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
			if p == nil {
				p = &uploadParams{}
			}
			return wrapFileResult(s.FileURIs.AuthorizeUpload(ctx, fileCaller(ctx), p.AuthorizeUploadParams))
		}),
		mcp.AddReceivingCustomMethod(s.mcp, mcpfile.MethodAuthorizeDownload, func(ctx context.Context, _ *mcp.ServerSession, p *downloadParams) (mcp.Result, error) {
			if p == nil {
				p = &downloadParams{}
			}
			return wrapFileResult(s.FileURIs.AuthorizeDownload(ctx, fileCaller(ctx), p.URI))
		}),
	)
	if err != nil {
		panic(fmt.Sprintf("agentcore: serve the file methods: %v", err)) // a name clash is a programming error
	}
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
