package agentcore

import (
	"context"
	"errors"
	"slices"

	"github.com/agentura/agentura/fileserve"
)

// Without authentication every caller is the one store owner
// (AnonymousOwner), so the store alone cannot tell whose a produced file is.
// A produced file's URI (mcp-file://<host>/out/<id>) is a handle, not a
// capability: files/authorizeDownload and a tool's file input take it only
// from the scope it was produced in (ownerscope.go: the caller's owner
// handle, else its session), and answer any other caller as if the file did
// not exist. An upload's (/in/<id>) likewise, when it was announced in a
// scope. Under authentication the owner is the caller, and the store's
// per-owner lookup is the check.

// fileScopeKey carries an anonymous caller's scope to fileOfURI.
type fileScopeKey struct{}

// withFileScope is ctx carrying scope, the anonymous caller's scope ("" for
// none), for the file URIs resolved under it.
func withFileScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, fileScopeKey{}, scope)
}

// producedInScope reports whether the caller of ctx may name the produced
// file id by its file URI: always under authentication, else only when the
// file was produced in the caller's scope.
func (s *Service) producedInScope(ctx context.Context, id string) (bool, error) {
	if s.callers.Authenticated() {
		return true, nil
	}
	scope := fileScopeOf(ctx)
	if scope == "" {
		return false, nil
	}
	return s.scopes.has(ctx, scope, id)
}

// fileScopeOf is the anonymous caller's scope ctx carries; "" for none.
func fileScopeOf(ctx context.Context) string {
	scope, _ := ctx.Value(fileScopeKey{}).(string)
	return scope
}

// ticketInScope reports whether the caller of ctx may name the upload
// ticket t by its file URI: a ticket announced in a scope only from that
// scope. A ticket announced without one (a sessionless caller's first
// request, before it had a handle) is its owner's, as under authentication.
func ticketInScope(ctx context.Context, t fileTicket) bool {
	return t.Scope == "" || t.Scope == fileScopeOf(ctx)
}

// has reports whether the file id was placed in scope.
func (o *ownerScopes) has(ctx context.Context, scope, id string) (bool, error) {
	if o.records == nil {
		return slices.ContainsFunc(o.mem.of(scope), func(m fileserve.Meta) bool { return m.ID == id }), nil
	}
	_, err := o.records.GetRecord(ctx, scopeRecordKind, scope, id)
	if errors.Is(err, fileserve.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
