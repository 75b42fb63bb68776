package agentcore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/signing"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Without authentication every caller is AnonymousOwner: one store owner,
// so one quota (AGENT_OWNER_QUOTA_BYTES) for all of them, and a rate limit
// per client address. What a caller sees in resources/list is narrower: the
// files produced in its scope. The scope is its MCP session when it has one
// (an initialize-based session of an older revision); without a session
// (2026-07-28, or AGENT_MCP_STATELESS) it is an owner handle: a token the
// agent signs and returns in the result's _meta (transfer.MetaOwner) and
// takes back in the _meta of later requests. A request that carries a
// handle is in that handle's scope, session or not.
//
// A handle only narrows what is listed: it is not an owner of the store, so
// minting fresh handles buys no quota and no rate, and the files stay
// readable by their signed URLs, the capability they always were. It names
// a random 128-bit id, is signed with the URL signing key (so every replica
// verifies it) and expires AGENT_OUTPUT_TTL after it was last handed out:
// by then every file produced under it has been swept.

const (
	// scopeRecordKind is the kind of the records (fileserve.RecordStore)
	// that place a produced file in a scope: owner = the scope, name = the
	// file id.
	scopeRecordKind = "mcp-scopes"
	// handleArea is the Area claim of an owner handle. It names no storage
	// area, so a handle is never a download token, and a download token
	// (area outputs or staging) never a handle.
	handleArea = "owner-handle"
)

// errOwnerHandle is the error of a handle the agent did not issue.
var errOwnerHandle = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
	"the owner handle in _meta[%q] is not one this agent issued (altered, or another deployment's); "+
		"send the handle a result of this agent returned, or none to start a new one", transfer.MetaOwner)}

// ownerScopes keeps which files each scope produced: in the store's records
// when it has them (every replica sees them; they expire with the outputs),
// else in this process's memory.
type ownerScopes struct {
	records fileserve.RecordStore // nil: memory
	mem     producedResources
}

// add places files in scope.
func (o *ownerScopes) add(ctx context.Context, scope string, files []fileserve.Meta, ttl time.Duration) error {
	if o.records == nil {
		o.mem.record(scope, files, ttl, time.Now())
		return nil
	}
	for _, f := range files {
		if err := o.records.PutRecord(ctx, scopeRecordKind, scope, f.ID, nil); err != nil {
			return err
		}
	}
	return nil
}

// ids are the ids of the files placed in scope, some perhaps swept since.
func (o *ownerScopes) ids(ctx context.Context, scope string) ([]string, error) {
	if o.records == nil {
		var out []string
		for _, m := range o.mem.of(scope) {
			out = append(out, m.ID)
		}
		return out, nil
	}
	infos, err := o.records.Records(ctx, scopeRecordKind, scope)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(infos))
	for _, in := range infos {
		out = append(out, in.Name)
	}
	return out, nil
}

// callScope is the scope of an anonymous request and, when it is a handle,
// the handle to return with the result (a fresh one for a request without
// a session or a handle). Under authentication there is none: the owner is
// the caller.
func (s *Service) callScope(req mcp.Request, m requestMeta) (scope, handle string, err error) {
	if s.callers.Authenticated() {
		return "", "", nil
	}
	id, err := s.handleID(m.ownerHandle)
	if err != nil {
		return "", "", err
	}
	if id == "" {
		if sid := sessionID(req); sid != "" {
			return "s-" + sid, "", nil
		}
		id = fileserve.NewID()
	}
	handle, err = s.signer.Sign(signing.Claims{Owner: AnonymousOwner, FileID: id, Area: handleArea, ExpiresAt: time.Now().Add(s.cfg.OutputTTL)})
	if err != nil {
		return "", "", err
	}
	return "h-" + id, handle, nil
}

// listScope is the scope whose files resources/list shows an anonymous
// request: its handle's, else its session's; "" when it has neither.
func (s *Service) listScope(req mcp.Request, m requestMeta) (string, error) {
	id, err := s.handleID(m.ownerHandle)
	switch {
	case err != nil:
		return "", err
	case id != "":
		return "h-" + id, nil
	case sessionID(req) != "":
		return "s-" + sessionID(req), nil
	}
	return "", nil
}

// handleID verifies an owner handle and returns the id it names; "" for
// no handle, or for one that has expired or whose key was rotated out (its
// files are gone or going: the caller starts a new scope). A handle the
// agent did not issue is an error.
func (s *Service) handleID(handle string) (string, error) {
	if handle == "" {
		return "", nil
	}
	c, err := s.signer.Verify(handle)
	if errors.Is(err, signing.ErrExpired) || errors.Is(err, signing.ErrUnknownKey) {
		return "", nil
	}
	if err != nil || c.Area != handleArea || c.Owner != AnonymousOwner || !fileserve.ValidID(c.FileID) {
		return "", errOwnerHandle
	}
	return c.FileID, nil
}

// sessionID is the MCP session of req, "" for a stateless request.
func sessionID(req mcp.Request) string {
	if req == nil || req.GetSession() == nil {
		return ""
	}
	return req.GetSession().ID()
}

// scopedFiles are the live produced files placed in scope.
func (s *Service) scopedFiles(ctx context.Context, scope string) ([]fileserve.Meta, error) {
	ids, err := s.scopes.ids(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("list the files of this caller: %w", err)
	}
	now := time.Now()
	var out []fileserve.Meta
	for _, id := range ids {
		m, err := s.store.Stat(ctx, fileserve.Outputs, AnonymousOwner, id)
		if err == nil && !expired(m, s.cfg.OutputTTL, now) {
			out = append(out, m)
		}
	}
	return out, nil
}

// producedResources is the memory of ownerScopes: which files each scope
// produced, for a store without records.
type producedResources struct {
	mu     sync.Mutex
	scopes map[string][]fileserve.Meta
}

// record notes that scope produced files, and forgets files past their
// lifetime (ttl) in every scope, so that the map does not outlive them.
func (p *producedResources) record(scope string, files []fileserve.Meta, ttl time.Duration, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.scopes == nil {
		p.scopes = map[string][]fileserve.Meta{}
	}
	p.scopes[scope] = append(p.scopes[scope], files...)
	for id, ms := range p.scopes {
		ms = slices.DeleteFunc(ms, func(m fileserve.Meta) bool { return expired(m, ttl, now) })
		if len(ms) == 0 {
			delete(p.scopes, id)
		} else {
			p.scopes[id] = ms
		}
	}
}

func (p *producedResources) of(scope string) []fileserve.Meta {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.scopes[scope])
}

func expired(m fileserve.Meta, ttl time.Duration, now time.Time) bool {
	return ttl > 0 && !m.Created.Add(ttl).After(now)
}
