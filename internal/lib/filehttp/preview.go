package filehttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/internal/lib/pdfpreview"
	"github.com/agentura/agentura/signing"
)

// previewQuery is the query parameter that asks a download URL for the
// picture of a PDF's first page instead of the file:
// /files/{id}/{name}?token=<JWT>&preview=1. Its access rule is the
// download's own: the same token, owner, area, expiry and revocation.
const previewQuery = "preview"

// wantsPreview reports whether a raw query asks for a preview.
func wantsPreview(raw string) bool {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if key, _, _ := strings.Cut(pair, "="); key == previewQuery {
			return true
		}
	}
	return false
}

// servePreview answers a download URL with &preview=1: the PNG of the
// first page of the PDF the token grants, rendered once and then answered
// from the renderer's cache. A file that is not a PDF answers 415, a PDF
// too large 413, one that cannot be rendered 422, an agent without
// pdftoppm 501, each with a JSON error body.
func (s *Server) servePreview(w http.ResponseWriter, r *http.Request, c signing.Claims, area fileserve.Area) {
	if s.previews == nil {
		httpjson.WriteError(w, http.StatusNotImplemented, "this agent renders no previews")
		return
	}
	m, err := s.store.Stat(r.Context(), area, c.Owner, c.FileID)
	if err != nil {
		s.storeFailed(w, r, c.FileID, err)
		return
	}
	if t, _, _ := strings.Cut(m.MIMEType, ";"); strings.TrimSpace(t) != "application/pdf" {
		httpjson.WriteError(w, http.StatusUnsupportedMediaType, "a preview is made of PDFs only; this file is "+contentType(m)+": download it instead (drop &preview)")
		return
	}
	key := string(area) + "/" + c.Owner + "/" + m.ID + "/" + m.ETag()
	png, err := s.previews.Render(r.Context(), key, m.Size, func() (io.ReadCloser, error) {
		obj, _, err := s.store.Open(r.Context(), area, c.Owner, c.FileID)
		return obj, err
	})
	if err != nil {
		s.previewFailed(w, r, c.FileID, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(png)))
	h.Set("Cache-Control", cacheControl(c.ExpiresAt, s.now()))
	h["X-Content-Type-Options"] = headerNosniff
	h["Content-Security-Policy"] = headerCSP
	h["Referrer-Policy"] = headerNoReferrer
	h["Access-Control-Allow-Origin"] = headerAnyOrigin
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(png)
	}
}

// previewFailed answers a preview that could not be made.
func (s *Server) previewFailed(w http.ResponseWriter, r *http.Request, id string, err error) {
	switch {
	case errors.Is(err, pdfpreview.ErrUnavailable):
		httpjson.WriteError(w, http.StatusNotImplemented, err.Error())
	case errors.Is(err, pdfpreview.ErrTooLarge):
		httpjson.WriteError(w, http.StatusRequestEntityTooLarge, err.Error()+": download it instead")
	case errors.Is(err, pdfpreview.ErrBusy):
		w.Header().Set("Retry-After", "5")
		httpjson.WriteError(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, context.Canceled):
		httpjson.WriteError(w, http.StatusServiceUnavailable, "the request ended before the preview was rendered")
	default:
		if _, bad := errors.AsType[*pdfpreview.RenderError](err); bad {
			httpjson.WriteError(w, http.StatusUnprocessableEntity, err.Error()+"; download the file instead")
			return
		}
		s.storeFailed(w, r, id, err)
	}
}
