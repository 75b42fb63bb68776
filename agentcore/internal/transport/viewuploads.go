package transport

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
)

// Files staged by an MCP Apps upload view (attach_file) are named to the
// model by reference, not by capability: the view tells the model the
// file's URI without its token, mcp-file://<host>/in/<id>, and keeps the
// signed File-Url to itself (SEP-2631's security section: hosts show
// models references, not bearer capabilities). The URI is an upload
// ticket whose bytes have arrived, resolved like any other: by its owner,
// and when anonymous only in the scope that called attach_file. That
// scope is not in the view's capability (a session id has no place in a
// token the view can read): attach_file places the capability's id in
// its caller's scope, as a produced file's id is placed (Scopes), and the
// ticket names that id (fileTicket.Grant).

// GrantUploads places the id of an upload view's capability in the scope
// of the caller of ctx, for as long as the capability may stage files and
// they last: the files staged with it resolve by reference in that scope.
// Under authentication the owner is the check, and nothing is kept.
func (f *FileURIs) GrantUploads(ctx context.Context, id string) error {
	scope := calls.FileScope(ctx)
	if f.Authenticated || scope == "" {
		return nil
	}
	return f.Scopes.Add(ctx, scope, []fileserve.Meta{{ID: id, Created: time.Now()}}, f.URLTTL+f.StagingTTL)
}

// AdoptUpload makes the file an upload view staged for owner with the
// capability grant (fileURL: the signed File-Url tus answered) an upload
// ticket, and returns its URI without token: the reference the view names
// the file by. Adopting the same file again returns the same URI.
func (f *FileURIs) AdoptUpload(ctx context.Context, owner, grant, fileURL string) (string, error) {
	u, err := url.Parse(fileURL)
	if err != nil {
		return "", errors.New("the staged file's URL does not parse")
	}
	c, err := f.Files.VerifyToken(u.Query().Get("token"))
	if err != nil || c.Area != string(fileserve.Staging) || c.Owner != owner {
		return "", errors.New("the staged file's URL is not one this agent signed for the capability's owner")
	}
	m, err := f.Store.Stat(ctx, fileserve.Staging, owner, c.FileID)
	if err != nil {
		return "", fmt.Errorf("look the staged file up: %w", err)
	}
	t := fileTicket{Name: m.Name, MIMEType: m.MIMEType, Size: m.Size, SHA256: m.SHA256,
		Expires: time.Now().Add(f.StagingTTL), Staged: m.ID, Grant: grant}
	if err := f.tickets.put(ctx, owner, m.ID, t); err != nil {
		return "", fmt.Errorf("keep the reference: %w", err)
	}
	return f.URI(FileKindIn, m.ID), nil
}

// ticketInScope reports whether the caller of ctx may name the upload
// ticket t by its file URI without token. A ticket announced in a scope
// only from that scope; a ticket announced without one (a sessionless
// caller's first request, before it had a handle) is its owner's, as under
// authentication; a file an upload view staged only from the scope that
// called attach_file.
func (f *FileURIs) ticketInScope(ctx context.Context, t fileTicket) (bool, error) {
	if t.Grant != "" && !f.Authenticated {
		return f.Scopes.has(ctx, calls.FileScope(ctx), t.Grant)
	}
	return t.Scope == "" || t.Scope == calls.FileScope(ctx), nil
}
