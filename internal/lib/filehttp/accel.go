package filehttp

import (
	"net/http"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/signing"
)

// accelerable reports whether a download may be handed to the web server
// in front (Config.AccelRedirect): a GET or HEAD without preconditions,
// whose conditional answers (304, 412) need the agent's ETag; a Range the
// web server answers itself.
func accelerable(r *http.Request) bool {
	h := r.Header
	for _, k := range [...]string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range"} {
		if _, ok := h[k]; ok {
			return false
		}
	}
	return true
}

// accelFile answers a download whose token checked out with the file's
// headers and X-Accel-Redirect to its content under the web server's
// internal location: nginx then sends the bytes itself, keeping
// Content-Type, Content-Disposition and Cache-Control, and adds what its
// location says (deploy/nginx/agent-files.conf: the agent's ETag, nosniff,
// the CSP, Referrer-Policy), which it does not pass on from an answer it
// redirects.
func (s *Server) accelFile(w http.ResponseWriter, r *http.Request, c signing.Claims, area fileserve.Area) {
	m, err := s.store.Stat(r.Context(), area, c.Owner, c.FileID)
	if err != nil {
		s.storeFailed(w, r, c.FileID, err)
		return
	}
	s.fileHeaders(w, m, c)
	h := w.Header()
	h["X-Accel-Redirect"] = []string{s.accelPrefix + s.accel.ContentPath(m)}
	h["Content-Length"] = []string{"0"} // the agent's answer is empty; nginx sends the file's length
	w.WriteHeader(http.StatusOK)
}
