package filehttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/connlimit"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/internal/lib/revocation"
	"github.com/agentura/agentura/signing"
	"github.com/agentura/agentura/transfer"
)

// maxRevokeBody bounds the body of POST /files/revoke: one URL.
const maxRevokeBody = 16 << 10

// ServeDelete answers DELETE /files/{id}[/{name...}][?token=JWT]: it
// deletes the caller's file now, before its TTL, and frees its quota on
// every replica (the revocation list tells the others). The caller must be
// the file's owner: the token names the file and its owner, who must be
// the caller Config.Owner returns (a bearer's sub under AGENT_AUTH=jwt or oauth);
// when Config.OwnerVerified, the id alone names a file of the caller.
// Every URL of the file stops working (404). It answers 204, or a JSON
// error: 403 (no or wrong token, another owner's file), 404 (no such file
// of the caller's), 500 (the store failed).
func (s *Server) ServeDelete(w http.ResponseWriter, r *http.Request) {
	serveTraced(w, r, spansDownload, s.serveDelete)
}

func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodDelete {
		w.Header().Set("Allow", "DELETE")
		httpjson.WriteError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed here; DELETE a file's URL to delete it")
		return
	}
	id, ok := fileIDFromPath(r.URL.Path)
	if !ok {
		httpjson.WriteError(w, http.StatusNotFound, "file not found: DELETE the URL the agent returned, /files/<uuid>/<name>?token=<token>")
		return
	}
	SetFileID(r, id)
	owner, ok := s.caller(w, r)
	if !ok {
		return
	}
	areas := []fileserve.Area{fileserve.Outputs, fileserve.Staging}
	if token := queryToken(r.URL.RawQuery); token != "" {
		c, err := s.verify(token)
		if err != nil {
			httpjson.WriteError(w, http.StatusForbidden, verifyReason(err))
			return
		}
		if c.FileID != id {
			httpjson.WriteError(w, http.StatusForbidden, "token is for another file")
			return
		}
		if c.Owner != owner {
			httpjson.WriteError(w, http.StatusForbidden, "the file is another caller's: only its owner may delete it")
			return
		}
		areas = []fileserve.Area{fileserve.Area(c.Area)}
	} else if !s.verified {
		httpjson.WriteError(w, http.StatusForbidden, "a token is required: DELETE the whole URL the agent returned, including ?token=")
		return
	}
	for _, area := range areas {
		if !area.Valid() {
			break
		}
		m, err := s.store.Stat(r.Context(), area, owner, id)
		if errors.Is(err, fileserve.ErrNotFound) {
			continue
		}
		if err == nil {
			err = s.store.Delete(r.Context(), area, owner, id)
		}
		if err != nil {
			s.log.LogAttrs(r.Context(), slog.LevelError, "fileserve: delete file", slog.String("id", id), slog.String("error", err.Error()))
			httpjson.WriteFailure(w, "delete the file", err)
			return
		}
		if s.revoked != nil {
			if err := s.revoked.FileDeleted(r.Context(), m.ID); err != nil {
				// Deleted all the same; the other replicas' quotas free it at their next refresh.
				s.log.LogAttrs(r.Context(), slog.LevelWarn, "fileserve: tell the other replicas of a deletion", slog.String("id", id), slog.String("error", err.Error()))
			}
		}
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "fileserve: file deleted by its owner", slog.String("id", id), slog.String("area", string(area)), slog.Int64("size", m.Size))
		w.WriteHeader(http.StatusNoContent)
		return
	}
	httpjson.WriteError(w, http.StatusNotFound, "file not found: it has expired or been deleted already, or is not yours")
}

// ServeRevoke answers POST /files/revoke with the JSON body
// {"url": "<a download URL of this agent>"} (transfer.RevokeRequest): that
// URL stops working on every replica within a second (403), while the
// file and its other URLs stay. The URL itself is the authority, as for a
// download: whoever holds it may end it (a leaked link is killed by anyone
// who has it, the file's owner or an operator). It answers 204, or a JSON
// error: 400 (not a URL of this agent), 403 (a token that does not
// verify), 429 (the revoker's cap, below), 501 (this agent keeps no
// revocation list), 500 (the store did not take it). A URL whose token has
// expired, or that was revoked already, answers 204 and adds nothing.
//
// Revocations are counted against a revoker, who may have a bounded number
// whose tokens have not expired yet (revocation.Options.MaxPerOwner): the
// token's owner, or for an anonymous owner's file (no authentication, one
// owner for all) the client address that revokes (connlimit.ClientKey),
// and all such addresses together revocation.SharedOwnerFactor times that.
func (s *Server) ServeRevoke(w http.ResponseWriter, r *http.Request) {
	serveTraced(w, r, spansRevoke, s.serveRevoke)
}

func (s *Server) serveRevoke(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		httpjson.WriteError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+transfer.RevokePath+"; POST {\"url\": \"<download URL>\"}")
		return
	}
	if s.revoked == nil {
		httpjson.WriteError(w, http.StatusNotImplemented, "this agent keeps no revocation list")
		return
	}
	var req transfer.RevokeRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRevokeBody+1))
	if err != nil || len(body) > maxRevokeBody || json.Unmarshal(body, &req) != nil || req.URL == "" {
		httpjson.WriteError(w, http.StatusBadRequest, "send {\"url\": \"<download URL>\"} as JSON, at most 16 KiB")
		return
	}
	u, err := url.Parse(req.URL)
	rest, ours := "", false
	if err == nil {
		rest, ours = strings.CutPrefix(u.Path, s.basePath+"/files/")
	}
	id, _, _ := strings.Cut(rest, "/")
	token := ""
	if ours {
		token = u.Query().Get("token")
	}
	if !ours || !fileserve.ValidID(id) || token == "" {
		httpjson.WriteError(w, http.StatusBadRequest, "not a download URL of this agent: want <public URL>/files/<uuid>/<name>?token=<token>")
		return
	}
	SetFileID(r, id)
	c, err := s.signer.Verify(token)
	switch {
	case errors.Is(err, signing.ErrExpired):
		w.WriteHeader(http.StatusNoContent) // dead already
		return
	case err != nil:
		httpjson.WriteError(w, http.StatusForbidden, verifyReason(err))
		return
	case c.FileID != id:
		httpjson.WriteError(w, http.StatusForbidden, "token is for another file")
		return
	}
	err = s.revoked.RevokeToken(r.Context(), token, c.ExpiresAt, revoker(r, c.Owner))
	if le, ok := errors.AsType[*revocation.LimitError](err); ok {
		secs := int(math.Ceil(le.RetryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		whose := "by this revoker"
		if le.Shared {
			whose = "by all unauthenticated callers together (4 × AGENT_MAX_REVOCATIONS)"
		}
		httpjson.WriteError(w, http.StatusTooManyRequests, fmt.Sprintf("too many revoked URLs: %d revoked %s have not expired yet, "+
			"the most there may be (AGENT_MAX_REVOCATIONS); DELETE the file instead, which ends every URL of it at once, "+
			"or retry after %d s, when the first of them is forgotten", le.Max, whose, secs))
		return
	}
	if err != nil {
		s.log.LogAttrs(r.Context(), slog.LevelError, "fileserve: revoke URL", slog.String("id", id), slog.String("error", err.Error()))
		httpjson.WriteFailure(w, "revoke the URL", err)
		return
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "fileserve: download URL revoked", slog.String("id", id), slog.String("token_id", signing.TokenID(token)))
	w.WriteHeader(http.StatusNoContent)
}

// revoker is who a revocation counts against: owner, unless it is the
// anonymous owner of every unauthenticated caller; then the client address
// (its IPv6 /64), as the request log middleware set it from a trusted
// proxy's X-Forwarded-For, and the anonymous owner as the shared owner of
// all such addresses (revocation.SharedOwnerFactor).
func revoker(r *http.Request, owner string) revocation.Revoker {
	if owner != AnonymousOwner {
		return revocation.Revoker{Key: "owner " + owner}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = connlimit.ClientKey(ip).String()
	}
	return revocation.Revoker{Key: "client " + host, Owner: "owner " + owner}
}

// verifyReason is the caller-facing reason of a token that did not verify.
func verifyReason(err error) string {
	if ve, ok := errors.AsType[*signing.VerifyError](err); ok {
		return ve.Reason
	}
	return "token is invalid"
}
