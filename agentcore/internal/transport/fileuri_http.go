package transport

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
)

// uploadAccepted is the body of a completed descriptor upload.
type uploadAccepted struct {
	File mcpfile.FileValue `json:"file"`
}

// ServeUpload answers PUT /uploads/mcp/<ticket>?token=<JWT>, the URL
// of an upload descriptor: the raw body is the file files/authorizeUpload
// announced. It lands in the staging area under the ticket's owner, capped
// at the declared size (else AGENT_MAX_UPLOAD_BYTES) while streaming, and
// counted against the owner's quota; a body whose size, sha-256 or type is
// not what was declared and accepted is removed and refused. The token is
// the capability: no Authorization header is needed, as with download URLs.
// Each PUT is a server span, "PUT /uploads/mcp/{id}", with the
// descriptor's id (agentura.file.id), never its token or file name.
func (f *FileURIs) ServeUpload(w http.ResponseWriter, r *http.Request) {
	ticketUploadSpans.Serve(w, r, f.serveUpload)
}

// ticketUploadSpans is the route of the descriptor uploads' spans.
var ticketUploadSpans = filehttp.NewRoute(TicketUploadPath + "{id}")

func (f *FileURIs) serveUpload(w http.ResponseWriter, r *http.Request) {
	refuse := func(code int, reason, format string, args ...any) {
		writeUpload(w, code, transfer.Error{Error: fmt.Sprintf(format, args...), Reason: reason})
	}
	if r.Method != http.MethodPut {
		w.Header().Set("Allow", "PUT")
		refuse(http.StatusMethodNotAllowed, "", "method %s is not allowed on an upload descriptor's URL; use PUT with the file as the body", calls.Truncate(r.Method, 20))
		return
	}
	id := strings.TrimPrefix(r.URL.Path, TicketUploadPath)
	c, err := f.Signer.Verify(r.URL.Query().Get("token"))
	if err != nil {
		refuse(http.StatusForbidden, "", "upload token refused: %v; ask files/authorizeUpload for a new descriptor", err)
		return
	}
	if c.Area != uploadTicketArea || c.FileID != id {
		refuse(http.StatusForbidden, "", "this token is not the upload descriptor's of %s", calls.Truncate(id, 40))
		return
	}
	filehttp.SetFileID(r, id)
	ctx := r.Context()
	claim := [2]string{c.Owner, id}
	if _, busy := f.tickets.uploading.LoadOrStore(claim, struct{}{}); busy {
		refuse(http.StatusConflict, "", "this file is being uploaded by another request; wait for it, then use its file URI")
		return
	}
	defer f.tickets.uploading.Delete(claim)
	t, err := f.tickets.get(ctx, c.Owner, id)
	switch {
	case errors.Is(err, fileserve.ErrNotFound):
		refuse(http.StatusNotFound, mcpfile.ReasonUnknownFile, "no such upload: it expired; ask files/authorizeUpload again")
		return
	case err != nil:
		f.failHTTP(w, r, "look the upload up", err)
		return
	case t.Staged != "":
		refuse(http.StatusConflict, "", "this file has been uploaded already; its file URI is ready for use")
		return
	}
	limit := f.MaxUploadBytes
	if t.Size >= 0 {
		limit = t.Size
	}
	if r.ContentLength > limit {
		refuse(http.StatusRequestEntityTooLarge, mcpfile.ReasonSizeMismatch, "the body is %d bytes; the upload was authorized for %d", r.ContentLength, limit)
		return
	}
	body := &bodyError{r: r.Body}
	m, err := f.Store.Put(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: c.Owner, Name: t.Name, MaxBytes: limit}, body)
	if err != nil {
		switch qe, overQuota := errors.AsType[*quota.Error](err); {
		case overQuota:
			refuse(http.StatusInsufficientStorage, mcpfile.ReasonQuotaExceeded, "%s", qe.Error())
		case errors.Is(err, fileserve.ErrTooLarge):
			refuse(http.StatusRequestEntityTooLarge, mcpfile.ReasonSizeMismatch, "the body is larger than the %d bytes the upload was authorized for; nothing was kept", limit)
		case body.err != nil:
			refuse(http.StatusBadRequest, "", "the upload was cut short: %v; nothing was kept", body.err)
		default:
			f.failHTTP(w, r, "store the upload", err)
		}
		return
	}
	drop := func() { f.Store.Delete(ctx, m.Area, m.Owner, m.ID) }
	switch accept := f.acceptedTypes(); {
	case t.Size >= 0 && m.Size != t.Size:
		drop()
		refuse(http.StatusBadRequest, mcpfile.ReasonSizeMismatch, "the body is %d bytes; the upload was authorized for %d; nothing was kept", m.Size, t.Size)
		return
	case t.SHA256 != "" && !strings.EqualFold(m.SHA256, t.SHA256):
		drop()
		refuse(http.StatusUnprocessableEntity, mcpfile.ReasonDigestMismatch, "the body's sha-256 is not the digest declared to files/authorizeUpload; nothing was kept: send the same bytes you declared")
		return
	case t.MIMEType != "" && !filetype.Agrees(t.MIMEType, m.MIMEType):
		drop()
		refuse(http.StatusUnsupportedMediaType, mcpfile.ReasonTypeMismatch, "the body is %s, not the %s declared to files/authorizeUpload; nothing was kept: send the file you declared, or declare its type", m.MIMEType, t.MIMEType)
		return
	case !mcpfile.Accepts(accept, m.MIMEType):
		drop()
		refuse(http.StatusUnsupportedMediaType, mcpfile.ReasonTypeNotAccepted, "the file is %s, which no tool of this agent takes (%s); nothing was kept", m.MIMEType, strings.Join(accept, ", "))
		return
	}
	// Another replica may have taken this descriptor while the body came:
	// the first to record wins, the other keeps nothing.
	if again, err := f.tickets.get(ctx, c.Owner, id); err == nil && again.Staged != "" {
		drop()
		refuse(http.StatusConflict, "", "this file has been uploaded already; its file URI is ready for use")
		return
	}
	t.Staged = m.ID
	t.Expires = time.Now().Add(f.StagingTTL)
	if err := f.tickets.put(ctx, c.Owner, id, t); err != nil {
		drop()
		f.failHTTP(w, r, "record the upload", err)
		return
	}
	writeUpload(w, http.StatusCreated, uploadAccepted{File: fileValue(f.URI(FileKindIn, id), m)})
}

// bodyError keeps the first error of the request body it reads, so that a
// broken upload (400) is told from a store that failed (500).
type bodyError struct {
	r   io.Reader
	err error
}

func (b *bodyError) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// failHTTP answers a failure of the agent's own met while doing what, as
// every HTTP route does (httpjson.WriteFailure), the details in the log.
func (f *FileURIs) failHTTP(w http.ResponseWriter, r *http.Request, what string, err error) {
	f.Log.LogAttrs(r.Context(), slog.LevelError, "descriptor upload: "+what, slog.String("error", err.Error()))
	httpjson.WriteFailure(w, what, err)
}

// writeUpload answers a descriptor upload with v as JSON, never cached.
func writeUpload(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	httpjson.WriteJSON(w, code, v)
}

// Uploading reports whether a descriptor's PUT is under way in this
// process.
func (f *FileURIs) Uploading() (busy bool) {
	f.tickets.uploading.Range(func(any, any) bool { busy = true; return false })
	return busy
}
