package mcpbind

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Produced files are MCP resources of their owner. Their URI is the signed
// download URL a resource_link carried, so resources/read accepts any link
// the agent returned; resources/list shows the caller's live files, newest
// first. The owner is the caller under authentication (its files are found
// in the store, on any replica) and, without authentication, the caller's
// scope, its MCP session or its owner handle (ownerscope.go): all anonymous
// callers share one store owner, so listing it would show one user's files
// to another.
//
// The go-sdk serves a fixed set of resources; per-owner ones are served by a
// receiving middleware on resources/list and resources/read, which falls
// through to the SDK for anything else an author added with MCPServer().

// ResourcePageSize is how many produced files one resources/list page holds.
const ResourcePageSize = 100

// fileTemplate is the resource template of produced files' URIs.
func (s *Server) fileTemplate() *mcp.ResourceTemplate {
	return &mcp.ResourceTemplate{
		URITemplate: s.PublicURL + "/files/{id}/{+name}{?token}",
		Name:        "produced-file",
		Title:       "A file this agent produced for you",
		Description: "The download URL of a produced file (a resource_link's uri) read as a resource; " +
			"files up to AGENT_RESOURCE_MAX_BYTES are served, larger ones only by their URL.",
	}
}

// serveResources registers the template and the middleware that serve
// produced files as resources.
func (s *Server) serveResources() {
	s.mcp.AddResourceTemplate(s.fileTemplate(), s.readProduced)
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch r := req.(type) {
			case *mcp.ReadResourceRequest:
				if r.Params != nil && s.ownURL(r.Params.URI) {
					return s.readProduced(ctx, r)
				}
			case *mcp.ListResourcesRequest:
				return s.listProduced(ctx, r, next, method)
			}
			return next(ctx, method, req)
		}
	})
}

// ownURL reports whether uri has the shape of this agent's download URLs.
func (s *Server) ownURL(uri string) bool {
	return strings.HasPrefix(uri, s.PublicURL+"/files/")
}

// Produced places the files a call stored in the caller's scope
// (ownerscope.go) and tells clients that the resource list changed: the
// go-sdk sends notifications/resources/list_changed when its own set
// changes, to every session of an older revision and to each 2026-07-28
// subscriptions/listen stream that asked for it; re-adding the (same)
// template is that change. It has no per-caller notification: a client
// that re-lists sees its own files only.
func (s *Server) Produced(ctx context.Context, scope string, stored []fileserve.Meta) {
	if len(stored) == 0 {
		return
	}
	if scope != "" {
		if err := s.Scopes.Add(ctx, scope, stored, s.OutputTTL); err != nil {
			s.Log.Warn("produced files not listed for their caller", "err", err)
		}
	}
	s.mcp.AddResourceTemplate(s.fileTemplate(), s.readProduced)
}

// readProduced answers resources/read of a produced file's URI for its
// owner; anything else, another owner's file included, is "not found".
func (s *Server) readProduced(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	obj, m, own, err := s.Files.OpenURL(ctx, uri, ownerOfExtra(req.Extra))
	if !own || err != nil {
		if err != nil {
			s.Log.Debug("resources/read refused", "err", err)
		}
		return nil, mcp.ResourceNotFoundError(uri)
	}
	defer obj.Close()
	max := s.ResourceMaxBytes
	if m.Size > max {
		return nil, fmt.Errorf("%s is %d bytes, over the %d bytes resources/read serves (AGENT_RESOURCE_MAX_BYTES); download it from its URL instead (GET %s)",
			m.Name, m.Size, max, transfer.Redact(uri))
	}
	data, err := calls.ReadAllMax(obj, max, m.Name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w; download it from its URL instead", m.Name, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{resourceContents(uri, m.MIMEType, data)}, Cacheable: cacheHints(req)}, nil
}

// resourceContents holds data as text for a text type, else as a blob.
func resourceContents(uri, mimeType string, data []byte) *mcp.ResourceContents {
	rc := &mcp.ResourceContents{URI: uri, MIMEType: mimeType}
	if filetype.IsText(mimeType) && utf8.Valid(data) {
		rc.Text = string(data)
	} else {
		rc.Blob = data
	}
	return rc
}

// listProduced answers resources/list: the resources an author added (first
// page only; views left out), then the caller's live produced files, newest first, with
// fresh signed URLs as URIs, ResourcePageSize a page.
func (s *Server) listProduced(ctx context.Context, req *mcp.ListResourcesRequest, next mcp.MethodHandler, method string) (mcp.Result, error) {
	cursor := ""
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}, Cacheable: cacheHints(req)}
	if cursor == "" {
		r, err := next(ctx, method, req)
		if err != nil {
			return nil, err
		}
		if lr, ok := r.(*mcp.ListResourcesResult); ok {
			for _, res := range lr.Resources {
				// Views (ui://, apps.go) are found through their tools'
				// _meta.ui.resourceUri; MCP Apps lets a server leave
				// them out of the list, which stays the caller's files.
				if !strings.HasPrefix(res.URI, "ui://") {
					out.Resources = append(out.Resources, res)
				}
			}
		}
	}
	metas, err := s.ownedFiles(ctx, req)
	if _, ours := errors.AsType[*fault.Fault](err); ours {
		return nil, s.failure(ctx, "list your files", err)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(metas, func(a, b fileserve.Meta) int {
		return cmp.Or(b.Created.Compare(a.Created), cmp.Compare(a.ID, b.ID))
	})
	start := 0
	if cursor != "" {
		after, err := decodeResourceCursor(cursor)
		if err != nil {
			return nil, err
		}
		start = len(metas)
		for i, m := range metas {
			if m.Created.Before(after.Created) || (m.Created.Equal(after.Created) && m.ID > after.ID) {
				start = i
				break
			}
		}
	}
	end := min(start+ResourcePageSize, len(metas))
	for _, m := range metas[start:end] {
		uri, err := s.Files.URL(m)
		if err != nil {
			return nil, err
		}
		out.Resources = append(out.Resources, &mcp.Resource{
			URI: uri, Name: m.Name, MIMEType: m.MIMEType, Size: m.Size,
			Meta: mcp.Meta{transfer.MetaSHA256: m.SHA256},
		})
	}
	if end < len(metas) {
		last := metas[end-1]
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(last.Created.UnixNano(), 10) + ":" + last.ID))
	}
	return out, nil
}

func decodeResourceCursor(c string) (fileserve.Meta, error) {
	bad := errors.New("the cursor is not one this agent handed out; list from the start (no cursor)")
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return fileserve.Meta{}, bad
	}
	ns, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil {
		return fileserve.Meta{}, bad
	}
	return fileserve.Meta{ID: id, Created: time.Unix(0, n)}, nil
}

// ownedFiles are the live produced files of the caller: under
// authentication all of its outputs in the store, without it the files
// produced in its scope (its session or its owner handle).
func (s *Server) ownedFiles(ctx context.Context, req *mcp.ListResourcesRequest) ([]fileserve.Meta, error) {
	now := time.Now()
	if s.Callers.Authenticated() {
		var out []fileserve.Meta
		owner := ownerOfExtra(req.Extra)
		err := s.Store.Walk(ctx, fileserve.Outputs, func(m fileserve.Meta) error {
			if m.Owner == owner && !transport.Expired(m, s.OutputTTL, now) {
				out = append(out, m)
			}
			return nil
		})
		if err != nil {
			return nil, fault.Of("list your files", err)
		}
		return out, nil
	}
	scope, err := s.listScope(req, readMeta(req))
	if err != nil || scope == "" {
		return nil, err
	}
	return s.scopedFiles(ctx, scope)
}
