// Package filehttp serves the files of a fileserve.Store over HTTP: GET/HEAD
// /files/{id}/{name} with a signed token (signing), and POST
// /uploads, which stages a large input for the same owner's later tool call.
// It is agentcore's, under internal/ because nothing else serves these
// endpoints; the Store it serves is the public extension point.
package filehttp

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentura/agentura/filename"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/pdfpreview"
	"github.com/agentura/agentura/internal/lib/revocation"
	"github.com/agentura/agentura/signing"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of Config.
const (
	DefaultURLTTL         = time.Hour
	DefaultMaxUploadBytes = 50 << 20
	// AnonymousOwner owns the files of callers when Config.Owner is nil.
	AnonymousOwner = "anonymous"
)

// Config is what a Server is built from.
type Config struct {
	// Store keeps the files. Required.
	Store fileserve.Store
	// Signer signs and verifies download tokens. Required.
	Signer *signing.Signer
	// PublicURL is the base of every URL handed out, such as
	// "http://localhost:8001" (AGENT_PUBLIC_URL). Required; a trailing slash
	// is ignored.
	PublicURL string
	// URLTTL is the lifetime of signed URLs (AGENT_URL_TTL); 0 means
	// DefaultURLTTL.
	URLTTL time.Duration
	// MaxUploadBytes caps a file sent to /uploads (AGENT_MAX_UPLOAD_BYTES);
	// 0 means DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// Owner returns the identity of the caller of /uploads. Authentication is
	// the caller's job; Owner reads the verified identity. An error answers
	// 401 with the error's text. nil: every caller is AnonymousOwner.
	Owner func(*http.Request) (string, error)
	// Logger receives server-side failures; nil means slog.Default().
	Logger *slog.Logger
	// Redirect, when not nil, answers each GET of /files/ whose token is
	// valid with 302 to a short-lived URL of the file straight from the
	// store (AGENT_S3_REDIRECT); HEAD is still answered here. nil: every
	// download streams through the server.
	Redirect fileserve.Presigner
	// Small, when not nil, reads small files for plain GETs from the
	// store's cache of open files (fileserve.SmallReader). nil: Store's
	// own, when it is a SmallReader (a store wrapped in another loses it:
	// pass it here).
	Small fileserve.SmallReader
	// Metrics, when not nil, receives agentura_downloads_total{status},
	// agentura_download_bytes_total and agentura_uploads_total{status}.
	Metrics prometheus.Registerer
	// Revocations, when not nil, is the list of revoked URLs, shared with
	// the other replicas: a revoked URL is refused (403) by downloads and
	// by OpenURL, ServeRevoke adds to it, and ServeDelete tells it of the
	// files it deletes. nil: URLs cannot be revoked.
	Revocations *revocation.List
	// AccelRedirect, when not empty, is the path prefix of a web server's
	// internal location (such as "/internal-files/") that serves the
	// folder of Accel: a download whose token checks out, without
	// preconditions, is answered with its headers and
	// `X-Accel-Redirect: <prefix><Accel.ContentPath>`, and nginx in front
	// sends the bytes (AGENT_ACCEL_REDIRECT). The token, owner and expiry
	// are checked here as for any download. Requires Accel.
	AccelRedirect string
	// Accel names where a file's content lies under the folder the web
	// server reads; nil: Store's own, when it is a fileserve.LocalPath.
	Accel fileserve.LocalPath
	// WriteTimeout bounds each write of a download: the deadline moves
	// forward as bytes go out, so a client that stops reading is dropped
	// after it and a slow but steady one is not (AGENT_WRITE_TIMEOUT).
	// 0: no write deadline.
	WriteTimeout time.Duration
	// OwnerVerified says that Owner verifies the caller's credentials
	// (AGENT_AUTH=jwt or oauth): a DELETE may then name a file by its id alone.
	// Otherwise a DELETE must carry the file's URL token.
	OwnerVerified bool
	// Previews, when not nil, renders the first page of a PDF for a
	// download URL with &preview=1 (the MCP Apps file view's picture).
	// nil: such a request answers 501.
	Previews *pdfpreview.Renderer
}

// Server offers the HTTP endpoints of a Store: downloads with signed tokens
// (ServeFile) and staging uploads (ServeUpload). It is safe for concurrent
// use.
//
// ServeFile remembers tokens that verified (a bounded set, each until it
// expires by the wall clock), so the several requests of one download pay
// for signature checking once. A test that simulates expiry should sign a
// token with a Signer made with a clock in the past (signing.WithClock), rather than move the
// serving Signer's clock forward after a download (which is also a data race
// with a running server).
type Server struct {
	store     fileserve.Store
	signer    *signing.Signer
	publicURL string // without trailing slash
	basePath  string // path of publicURL, without trailing slash
	ttl       time.Duration
	maxUpload int64
	owner     func(*http.Request) (string, error)
	redirect  fileserve.Presigner
	small     fileserve.SmallReader
	log       *slog.Logger
	metrics   *serverMetrics
	now       func() time.Time
	tokens    *tokenCache
	revoked   *revocation.List // nil: no revocations
	verified  bool             // Config.OwnerVerified
	previews  *pdfpreview.Renderer

	writeTimeout time.Duration       // Config.WriteTimeout
	accelPrefix  string              // Config.AccelRedirect
	accel        fileserve.LocalPath // nil: no X-Accel-Redirect
}

// NewServer checks cfg and returns a Server.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("fileserve: Config.Store is nil; pass a store such as NewDiskStore(dataDir)")
	}
	if cfg.Signer == nil {
		return nil, errors.New("fileserve: Config.Signer is nil; pass a signing.Signer")
	}
	pub := strings.TrimRight(cfg.PublicURL, "/")
	u, err := url.Parse(pub)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("fileserve: public URL %q must be an absolute http(s) URL without query, such as http://localhost:8001 (AGENT_PUBLIC_URL)", cfg.PublicURL)
	}
	if cfg.URLTTL < 0 {
		return nil, fmt.Errorf("fileserve: URL lifetime %v is negative (AGENT_URL_TTL)", cfg.URLTTL)
	}
	if cfg.MaxUploadBytes < 0 {
		return nil, fmt.Errorf("fileserve: upload limit %d is negative (AGENT_MAX_UPLOAD_BYTES)", cfg.MaxUploadBytes)
	}
	m, err := newServerMetrics(cfg.Metrics)
	if err != nil {
		return nil, fmt.Errorf("fileserve: %w", err)
	}
	s := &Server{
		store:        cfg.Store,
		signer:       cfg.Signer,
		publicURL:    pub,
		basePath:     strings.TrimRight(u.Path, "/"),
		ttl:          cmp.Or(cfg.URLTTL, DefaultURLTTL),
		maxUpload:    cmp.Or(cfg.MaxUploadBytes, DefaultMaxUploadBytes),
		owner:        cfg.Owner,
		redirect:     cfg.Redirect,
		small:        cfg.Small,
		log:          cmp.Or(cfg.Logger, slog.Default()),
		metrics:      m,
		tokens:       newTokenCache(),
		now:          time.Now,
		revoked:      cfg.Revocations,
		verified:     cfg.OwnerVerified,
		writeTimeout: cfg.WriteTimeout,
		accelPrefix:  cfg.AccelRedirect,
		previews:     cfg.Previews,
	}
	if sr, ok := cfg.Store.(fileserve.SmallReader); ok && s.small == nil {
		s.small = sr
	}
	if cfg.AccelRedirect != "" {
		if !strings.HasPrefix(cfg.AccelRedirect, "/") || !strings.HasSuffix(cfg.AccelRedirect, "/") || strings.ContainsAny(cfg.AccelRedirect, "?#% \t\r\n") {
			return nil, fmt.Errorf("fileserve: X-Accel-Redirect prefix %q must be a path that starts and ends with /, such as /internal-files/ (AGENT_ACCEL_REDIRECT)", cfg.AccelRedirect)
		}
		s.accel = cfg.Accel
		if lp, ok := cfg.Store.(fileserve.LocalPath); ok && s.accel == nil {
			s.accel = lp
		}
		if s.accel == nil {
			return nil, errors.New("fileserve: X-Accel-Redirect needs a store whose files lie on a local disk that the web server reads, such as the disk store; this store is not one (AGENT_ACCEL_REDIRECT with AGENT_STORAGE_URL)")
		}
	}
	if s.owner == nil {
		s.owner = func(*http.Request) (string, error) { return AnonymousOwner, nil }
	}
	return s, nil
}

// URL returns the signed download URL of m, valid for the configured URL
// lifetime: <PublicURL>/files/<id>/<name>?token=<JWT>, built by
// signing.Signer.FileURL (the one builder of these URLs, which a service
// beside the agents sharing the store uses too). The token binds the id, the
// owner and the area; the name, cleaned again by filename.Clean in case m did
// not come from a store that cleans it, is only there for people and for
// clients that take the file name from the URL.
func (s *Server) URL(m fileserve.Meta) (string, error) {
	c, err := s.claims(m)
	if err != nil {
		return "", err
	}
	u, err := s.signer.FileURL(s.publicURL, c, filename.Clean(m.Name))
	if err != nil {
		return "", fmt.Errorf("fileserve: sign URL for file %s: %w", m.ID, err)
	}
	return u, nil
}

// Token signs the download token of m that URL carries, valid for the
// configured URL lifetime: a capability to the file, which a file URI of
// the draft MCP file contract carries too.
func (s *Server) Token(m fileserve.Meta) (string, error) {
	c, err := s.claims(m)
	if err != nil {
		return "", err
	}
	return s.signer.Sign(c)
}

// claims are the claims of a download token of m, from now on.
func (s *Server) claims(m fileserve.Meta) (signing.Claims, error) {
	if !fileserve.ValidID(m.ID) || !m.Area.Valid() || m.Owner == "" {
		return signing.Claims{}, fmt.Errorf("fileserve: cannot sign a URL for file %q in area %q: metadata must come from the store (id, area and owner set)", m.ID, m.Area)
	}
	return signing.Claims{Owner: m.Owner, FileID: m.ID, Area: string(m.Area), ExpiresAt: s.now().Add(s.ttl)}, nil
}

// VerifyToken checks a download token as a download does: its signature,
// audience and expiry, and the revocation list. A failure is a
// *signing.VerifyError whose Reason a caller may read.
func (s *Server) VerifyToken(token string) (signing.Claims, error) { return s.verify(token) }

// fileIDFromPath finds the file id in a request path: /files/{id}/{name...}
// wherever the handler is mounted, or {id}/{name...} under a stripped prefix.
// The name is cosmetic, but it must be a clean name, as in every URL this
// server hands out: no "." or ".." segments, backslashes or control
// characters. ok is false when there is no well-formed id or the name is not
// clean.
func fileIDFromPath(p string) (id string, ok bool) {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	at := -1
	if fileserve.ValidID(segs[0]) {
		at = 0
	} else {
		for i := 0; i+1 < len(segs); i++ {
			if segs[i] == "files" && fileserve.ValidID(segs[i+1]) {
				at = i + 1
				break
			}
		}
	}
	if at < 0 {
		return "", false
	}
	for _, seg := range segs[at+1:] {
		if seg == "." || seg == ".." || strings.ContainsFunc(seg, func(r rune) bool { return r == '\\' || r < 0x20 || r == 0x7f }) {
			return "", false
		}
	}
	return segs[at], true
}
