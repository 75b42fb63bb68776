package filehttp

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/signing"
)

// maxRedirectTTL bounds the lifetime of a presigned URL a download is
// redirected to; it is shorter still when the download token expires
// sooner.
const maxRedirectTTL = 5 * time.Minute

// minRedirectTTL is the shortest lifetime of a presigned URL: S3 counts it
// in whole seconds, at least one. A token with less left is served by the
// server itself, as it still grants the file.
const minRedirectTTL = time.Second

// redirectFile answers a GET whose token checked out with 302 to a
// presigned URL of the file (AGENT_S3_REDIRECT): the bytes then flow from
// the object store to the client without passing through the agent.
func (s *Server) redirectFile(w http.ResponseWriter, r *http.Request, c signing.Claims, area fileserve.Area) {
	m, err := s.store.Stat(r.Context(), area, c.Owner, c.FileID)
	if err != nil {
		s.storeFailed(w, r, c.FileID, err)
		return
	}
	ttl := min(maxRedirectTTL, c.ExpiresAt.Sub(s.now()))
	u, err := s.redirect.Presign(r.Context(), m, ttl, contentType(m), contentDisposition(baseName(m.Name)))
	if err != nil {
		s.log.LogAttrs(r.Context(), slog.LevelError, "fileserve: presign download", slog.String("id", m.ID), slog.String("error", err.Error()))
		httpjson.WriteFailure(w, "serve the file", err)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Location", u)
	w.WriteHeader(http.StatusFound)
}
