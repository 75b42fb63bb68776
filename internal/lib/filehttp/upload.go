package filehttp

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/agentura/agentura/transfer"
)

// multipartOverhead is what the body of a multipart upload may hold beyond
// the file itself: boundaries, part headers, small extra fields.
const multipartOverhead = 64 << 10

// httpError is a failure with the status and message to answer.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// ServeUpload answers POST /uploads: it stages one file for the caller, to
// be named in a later tool call, and answers 201 with a transfer.Upload.
//
// The body is either multipart/form-data with the file in the field "file"
// (streamed, never buffered in memory or temporary files), or the raw
// content with the name in an X-Filename header, plain UTF-8 or in the
// percent-encoded form of RFC 8187:
//
//	X-Filename: UTF-8''Bericht_%C3%BC.pdf
//
// Over the upload limit it answers 413 and keeps nothing; over the owner's
// quota (a quota.Store) 507, saying when space frees up. Errors are JSON
// {"error": "..."}.
func (s *Server) ServeUpload(w http.ResponseWriter, r *http.Request) {
	r, span := startHTTP(r, spansUploads)
	cw := &countingWriter{ResponseWriter: w}
	s.serveUpload(cw, r)
	s.metrics.upload(cw.status())
	endHTTP(span, cw.status())
}

func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		httpjson.WriteError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on /uploads; use POST")
		return
	}
	owner, ok := s.caller(w, r)
	if !ok {
		return
	}
	tooLarge := s.tooLarge()
	if r.ContentLength > s.maxUpload+multipartOverhead {
		httpjson.WriteError(w, http.StatusRequestEntityTooLarge, tooLarge)
		return
	}
	r.Body = http.MaxBytesReader(innermost(w), r.Body, s.maxUpload+multipartOverhead)

	name, body, err := uploadSource(r)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			httpjson.WriteError(w, http.StatusRequestEntityTooLarge, tooLarge)
			return
		}
		he := &httpError{code: http.StatusBadRequest, msg: err.Error()}
		errors.As(err, &he)
		httpjson.WriteError(w, he.code, he.msg)
		return
	}
	src := &bodyReader{r: body}
	m, err := s.store.Put(r.Context(), fileserve.NewFile{Area: fileserve.Staging, Owner: owner, Name: name, MaxBytes: s.maxUpload}, src)
	if err != nil {
		_, overBody := errors.AsType[*http.MaxBytesError](src.err)
		switch qe, overQuota := errors.AsType[*quota.Error](err); {
		case overQuota:
			httpjson.WriteError(w, http.StatusInsufficientStorage, qe.Error())
		case errors.Is(err, fileserve.ErrTooLarge) || overBody:
			httpjson.WriteError(w, http.StatusRequestEntityTooLarge, tooLarge)
		case src.err != nil:
			httpjson.WriteError(w, http.StatusBadRequest, "the upload was cut short: read the content: "+src.err.Error())
		default:
			s.log.LogAttrs(r.Context(), slog.LevelError, "fileserve: store upload", slog.String("error", err.Error()))
			httpjson.WriteFailure(w, "store the upload", err)
		}
		return
	}
	if span := recording(r); span != nil {
		span.SetAttributes(attrFileID.String(m.ID), attrFileSize.Int64(m.Size))
	}
	u, err := s.URL(m)
	if err != nil {
		s.log.LogAttrs(r.Context(), slog.LevelError, "fileserve: sign upload URL", slog.String("error", err.Error()))
		s.store.Delete(r.Context(), m.Area, m.Owner, m.ID)
		httpjson.WriteFailure(w, "sign the upload's URL", err)
		return
	}
	httpjson.WriteJSON(w, http.StatusCreated, transfer.Upload{URL: u, Name: m.Name, SizeBytes: m.Size, MIMEType: m.MIMEType})
}

// caller returns the owner of an upload request, or answers 401.
func (s *Server) caller(w http.ResponseWriter, r *http.Request) (string, bool) {
	owner, err := s.owner(r)
	if err != nil || owner == "" {
		msg := "authentication required"
		if err != nil {
			msg += ": " + err.Error()
		}
		httpjson.WriteError(w, http.StatusUnauthorized, msg)
		return "", false
	}
	return owner, true
}

// tooLarge is the message of an upload over the cap.
func (s *Server) tooLarge() string {
	return fmt.Sprintf("upload exceeds the limit of %d bytes (AGENT_MAX_UPLOAD_BYTES)", s.maxUpload)
}

// bodyReader keeps the error of the request body it reads, so that a broken
// upload (400) is told from a store that failed (500) whatever the store
// makes of the error.
type bodyReader struct {
	r   io.Reader
	err error // first read error other than io.EOF
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// uploadSource finds the file name and content of an upload request.
func uploadSource(r *http.Request) (name string, body io.Reader, err error) {
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType != "multipart/form-data" {
		name = headerFileName(r.Header.Get("X-Filename"))
		if name == "" {
			return "", nil, &httpError{http.StatusBadRequest, "the upload has no file name: send the content as the raw body with an X-Filename header, or as multipart/form-data with a field `file`"}
		}
		return name, r.Body, nil
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return "", nil, &httpError{http.StatusBadRequest, "malformed multipart body: " + err.Error()}
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return "", nil, &httpError{http.StatusBadRequest, "the multipart body has no field `file`: send the content in a field named file, or as the raw body with an X-Filename header"}
		}
		if err != nil {
			return "", nil, fmt.Errorf("malformed multipart body: %w", err)
		}
		if part.FormName() != "file" {
			part.Close() // skips the part's content
			continue
		}
		name = cmp.Or(partFileName(part.Header.Get("Content-Disposition")), headerFileName(r.Header.Get("X-Filename")))
		if name == "" {
			return "", nil, &httpError{http.StatusBadRequest, "the multipart field `file` has no filename: set filename in its Content-Disposition, or send an X-Filename header"}
		}
		return name, part, nil
	}
}

// partFileName returns the filename parameter of a part's
// Content-Disposition, with its folders (multipart.Part.FileName drops
// them; filename.Clean makes them safe).
func partFileName(disposition string) string {
	_, params, err := mime.ParseMediaType(disposition)
	if err != nil {
		return ""
	}
	return params["filename"] // filename* is decoded into filename
}

// headerFileName decodes X-Filename: plain UTF-8, or percent-encoded UTF-8
// after the prefix "UTF-8" and two apostrophes.
func headerFileName(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 7 && strings.EqualFold(v[:7], "UTF-8''") {
		if dec, err := url.PathUnescape(v[7:]); err == nil {
			return dec
		}
	}
	return v
}
