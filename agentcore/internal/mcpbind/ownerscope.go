package mcpbind

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/signing"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Without authentication every caller is calls.AnonymousOwner: one store owner,
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

// handleArea is the Area claim of an owner handle. It names no storage
// area, so a handle is never a download token, and a download token (area
// outputs or staging) never a handle.
const handleArea = "owner-handle"

// errOwnerHandle is the error of a handle the agent did not issue.
var errOwnerHandle = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
	"the owner handle in _meta[%q] is not one this agent issued (altered, or another deployment's); "+
		"send the handle a result of this agent returned, or none to start a new one", transfer.MetaOwner)}

// callScope is the scope of an anonymous request and, when it is a handle,
// the handle to return with the result (a fresh one for a request without
// a session or a handle). Under authentication there is none: the owner is
// the caller.
func (s *Server) callScope(req mcp.Request, m requestMeta) (scope, handle string, err error) {
	if s.Callers.Authenticated() {
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
	handle, err = s.Signer.Sign(signing.Claims{Owner: calls.AnonymousOwner, FileID: id, Area: handleArea, ExpiresAt: time.Now().Add(s.OutputTTL)})
	if err != nil {
		return "", "", err
	}
	return "h-" + id, handle, nil
}

// listScope is the scope whose files resources/list shows an anonymous
// request: its handle's, else its session's; "" when it has neither.
func (s *Server) listScope(req mcp.Request, m requestMeta) (string, error) {
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
func (s *Server) handleID(handle string) (string, error) {
	if handle == "" {
		return "", nil
	}
	c, err := s.Signer.Verify(handle)
	if errors.Is(err, signing.ErrExpired) || errors.Is(err, signing.ErrUnknownKey) {
		return "", nil
	}
	if err != nil || c.Area != handleArea || c.Owner != calls.AnonymousOwner || !fileserve.ValidID(c.FileID) {
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
func (s *Server) scopedFiles(ctx context.Context, scope string) ([]fileserve.Meta, error) {
	ids, err := s.Scopes.IDs(ctx, scope)
	if err != nil {
		return nil, fault.Of("list your files", err)
	}
	now := time.Now()
	var out []fileserve.Meta
	for _, id := range ids {
		m, err := s.Store.Stat(ctx, fileserve.Outputs, calls.AnonymousOwner, id)
		if err == nil && !transport.Expired(m, s.OutputTTL, now) {
			out = append(out, m)
		}
	}
	return out, nil
}
