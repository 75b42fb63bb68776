package filehttp

import (
	"cmp"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentura/agentura/filename"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/signing"
)

// downloadCSP keeps a downloaded file, should a browser ever render it,
// from loading or running anything in the agent's origin.
const downloadCSP = "default-src 'none'; sandbox"

// ServeFile answers GET and HEAD /files/{id}/{name...}?token=JWT with the
// file the token grants. The token decides everything: the id in the path
// must be the token's, the token's area and owner select the file, and the
// name in the path is cosmetic. Range, If-None-Match, If-Modified-Since and
// HEAD are handled by http.ServeContent.
//
// A missing, wrong or expired token answers 403, an unknown or swept file
// 404, other methods 405, each with a JSON body {"error": "..."}.
//
// Mount it at /files/ with the full path in r.URL.Path (net/http ServeMux,
// or gin's GET /files/*path with gin.WrapF); a prefix stripped by
// http.StripPrefix works too.
//
// Every write of a download has a deadline of Config.WriteTimeout, moved
// forward as the file goes out: a client that stops reading is dropped, a
// slow but steady one is not. On the server's own connections
// (ConnContext) the response is corked until it is whole.
func (s *Server) ServeFile(w http.ResponseWriter, r *http.Request) {
	r, span := startHTTP(r, spansDownload)
	cw := &countingWriter{ResponseWriter: w}
	if s.writeTimeout > 0 {
		cw.rc, cw.timeout = http.NewResponseController(w), s.writeTimeout
	}
	uncork := cork(r)
	s.serveFile(cw, r)
	cw.finish(uncork)
	s.metrics.download(cw.status(), cw.n)
	if span.IsRecording() {
		// The id of the path (the file's, within its owner's files), never
		// the token or the name after it.
		if id, ok := fileIDFromPath(r.URL.Path); ok {
			span.SetAttributes(attrFileID.String(id))
		}
		span.SetAttributes(attrBytesSent.Int64(cw.n))
	}
	endHTTP(span, cw.status())
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpjson.WriteError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on /files/; use GET or HEAD")
		return
	}
	id, ok := fileIDFromPath(r.URL.Path)
	if !ok {
		httpjson.WriteError(w, http.StatusNotFound, "file not found: a download URL has the form /files/<uuid>/<name>?token=<token>")
		return
	}
	token := queryToken(r.URL.RawQuery)
	if token == "" {
		httpjson.WriteError(w, http.StatusForbidden, "a download token is required: use the whole URL the agent returned, including ?token=")
		return
	}
	c, err := s.verify(token)
	if err != nil {
		httpjson.WriteError(w, http.StatusForbidden, verifyReason(err))
		return
	}
	if c.FileID != id {
		httpjson.WriteError(w, http.StatusForbidden, "token is for another file")
		return
	}
	area := fileserve.Area(c.Area)
	if !area.Valid() {
		httpjson.WriteError(w, http.StatusForbidden, "token does not name a storage area")
		return
	}
	if wantsPreview(r.URL.RawQuery) {
		s.servePreview(w, r, c, area)
		return
	}
	if s.redirect != nil && r.Method == http.MethodGet && c.ExpiresAt.Sub(s.now()) >= minRedirectTTL {
		s.redirectFile(w, r, c, area)
		return
	}
	if s.accel != nil && accelerable(r) {
		s.accelFile(w, r, c, area)
		return
	}
	plain := plainGet(r)
	if plain && s.small != nil {
		// A small file from the store's cache of open files: no open or close.
		bp := smallBufs.Get().(*[]byte)
		defer smallBufs.Put(bp)
		m, content, ok, err := s.small.ReadSmall(r.Context(), area, c.Owner, id, *bp)
		if err != nil {
			s.storeFailed(w, r, id, err)
			return
		}
		if ok {
			s.fileHeaders(w, m, c)
			writeSmall(w, m, content)
			return
		}
	}
	obj, m, err := s.store.Open(r.Context(), area, c.Owner, id)
	if err != nil {
		s.storeFailed(w, r, id, err)
		return
	}
	defer obj.Close()
	s.fileHeaders(w, m, c)
	if plain && serveSmall(w, obj, m) {
		return
	}
	http.ServeContent(w, r, "", m.Created, sizedObject(obj, m.Size))
}

// fileHeaders sets the headers of a download of m under the token claims c.
func (s *Server) fileHeaders(w http.ResponseWriter, m fileserve.Meta, c signing.Claims) {
	// Keys are canonical already; the fixed values are shared slices, which
	// net/http only reads. This is the hot path of small downloads.
	h := w.Header()
	h["Content-Type"] = []string{contentType(m)} // set, so ServeContent never sniffs
	h["Etag"] = []string{m.ETag()}
	h["Content-Disposition"] = []string{contentDisposition(baseName(m.Name))}
	h["Cache-Control"] = []string{cacheControl(c.ExpiresAt, s.now())}
	h["X-Content-Type-Options"] = headerNosniff
	h["Content-Security-Policy"] = headerCSP
	h["Referrer-Policy"] = headerNoReferrer
	// The signed URL is the capability, never a cookie: any page holding
	// it may read the file, as curl may. MCP Apps views (sandboxed, Origin
	// null) fetch their previews so.
	h["Access-Control-Allow-Origin"] = headerAnyOrigin
}

// storeFailed answers a failure to find or read a file: 404 when it is not
// there, 500 (logged) otherwise.
func (s *Server) storeFailed(w http.ResponseWriter, r *http.Request, id string, err error) {
	if errors.Is(err, fileserve.ErrNotFound) {
		httpjson.WriteError(w, http.StatusNotFound, "file not found: it has expired and been deleted, or never existed; ask the agent for it again")
		return
	}
	s.log.LogAttrs(r.Context(), slog.LevelError, "fileserve: open file for download", slog.String("id", id), slog.String("error", err.Error()))
	httpjson.WriteFailure(w, "read the file", err)
}

// contentType is the type a file is served with.
func contentType(m fileserve.Meta) string {
	return cmp.Or(m.MIMEType, filetype.Generic)
}

// sizedObject lets ServeContent learn the size of a freshly opened file from
// its metadata rather than by seeking to the end and back (two system calls
// per download). An *os.File stays reachable underneath, so sendfile works.
func sizedObject(obj fileserve.Object, size int64) io.ReadSeeker {
	f, ok := obj.(*os.File)
	if !ok {
		return obj
	}
	return &knownSize{File: f, size: size}
}

// knownSize answers Seek(0, io.SeekEnd), Seek(0, io.SeekStart) and
// Seek(0, io.SeekCurrent) without touching the file while its real offset is
// still 0. Any other seek first makes the real offset what the caller
// believes it is, so the wrapper is right for any order of calls, not only
// the one ServeContent makes today.
type knownSize struct {
	*os.File
	size    int64
	atEnd   bool // a faked seek to the end is pending
	touched bool // the real offset may have moved
}

// Seek implements io.Seeker.
func (k *knownSize) Seek(offset int64, whence int) (int64, error) {
	if !k.touched && offset == 0 {
		switch whence {
		case io.SeekEnd:
			k.atEnd = true
			return k.size, nil
		case io.SeekStart:
			k.atEnd = false
			return 0, nil
		case io.SeekCurrent:
			if k.atEnd {
				return k.size, nil
			}
			return 0, nil
		}
	}
	if k.atEnd {
		if _, err := k.File.Seek(0, io.SeekEnd); err != nil {
			return 0, err
		}
	}
	k.touched, k.atEnd = true, false
	return k.File.Seek(offset, whence)
}

// Read implements io.Reader; after a faked seek to the end it reads nothing.
func (k *knownSize) Read(p []byte) (int, error) {
	if k.atEnd {
		return 0, io.EOF
	}
	k.touched = true
	return k.File.Read(p)
}

// Fixed header values of every download.
var (
	headerNosniff    = []string{"nosniff"}
	headerCSP        = []string{downloadCSP}
	headerNoReferrer = []string{"no-referrer"}
	headerAnyOrigin  = []string{"*"}
)

// verify checks a download token, remembering those that pass, and
// refuses a revoked one.
func (s *Server) verify(token string) (signing.Claims, error) {
	c, ok := s.tokens.valid(token, s.now())
	if !ok {
		var err error
		if c, err = s.signer.Verify(token); err != nil {
			return signing.Claims{}, err
		}
		s.tokens.Put(token, c)
	}
	if s.isRevoked(token) {
		return signing.Claims{}, errRevoked
	}
	return c, nil
}

// errRevoked is the error of a revoked token.
var errRevoked = &signing.VerifyError{Err: signing.ErrRevoked, Reason: "this download URL was revoked; ask for the file again"}

// isRevoked reports whether token is on the revocation list.
func (s *Server) isRevoked(token string) bool {
	return s.revoked != nil && s.revoked.Revoked(token)
}

// queryToken returns the first "token" parameter of a raw query, without
// parsing the others.
func queryToken(raw string) string {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		key, value, _ := strings.Cut(pair, "=")
		if key != "token" {
			continue
		}
		if strings.ContainsAny(value, "%+") {
			v, err := url.QueryUnescape(value)
			if err != nil {
				return ""
			}
			return v
		}
		return value
	}
	return ""
}

// cacheControl lets the browser (only) keep the file as long as the token
// that fetched it is valid.
func cacheControl(expires, now time.Time) string {
	secs := int64(expires.Sub(now) / time.Second)
	if secs <= 0 {
		return "no-store"
	}
	return "private, max-age=" + strconv.FormatInt(secs, 10)
}

// baseName is the last segment of a cleaned name: what a downloaded file is
// called on the user's disk.
func baseName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// contentDisposition is `attachment` with both an ASCII filename= fallback
// and the exact UTF-8 name in filename*= (RFC 6266, RFC 8187).
func contentDisposition(name string) string {
	name = cmp.Or(name, filename.Default)
	var fallback, exact strings.Builder
	for _, r := range name {
		if r < 0x20 || r >= 0x7f || r == '"' || r == '\\' {
			fallback.WriteByte('_')
		} else {
			fallback.WriteRune(r)
		}
	}
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(name); i++ {
		if b := name[i]; isAttrChar(b) {
			exact.WriteByte(b)
		} else {
			exact.WriteByte('%')
			exact.WriteByte(hex[b>>4])
			exact.WriteByte(hex[b&15])
		}
	}
	return `attachment; filename="` + fallback.String() + `"; filename*=UTF-8''` + exact.String()
}

// isAttrChar reports whether b may appear unescaped in an RFC 8187 value.
func isAttrChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", b) >= 0
}
