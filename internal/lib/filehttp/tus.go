package filehttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/agentura/agentura/transfer"
	"github.com/tus/tusd/v2/pkg/handler"
	"github.com/tus/tusd/v2/pkg/memorylocker"
	xslog "golang.org/x/exp/slog"
)

// TusConfig configures the resumable uploads of [Server.Tus].
type TusConfig struct {
	// Dir holds the unfinished uploads, in a folder per owner. It should
	// lie on the store's file system (for a DiskStore: under its root), so
	// a finished upload is adopted by rename. It is made if missing; the
	// records found in it count against the quota (Server's store a
	// quota.Reserver) from the start.
	Dir string
	// TTL is how long an unfinished upload is kept, counted from its
	// creation: the staging TTL. 0 means DefaultURLTTL.
	TTL time.Duration
}

// Tus serves resumable uploads with the tus 1.0 protocol at
// transfer.TusPath (core, creation, termination, expiration). It stages
// files as POST /uploads does, for the same owner and under the same cap;
// the PATCH that completes an upload answers 204 with the signed URL of the
// staged file in the File-Url header. With a quota an upload reserves its
// Upload-Length when it is created (507 when it does not fit);
// Upload-Metadata is capped at 8 KiB and only the file name is kept. An
// upload complete while the store cannot take it (an outage) is kept: the
// PATCH answers 503 with Retry-After, and the client's resumption stores
// it. Use [Server.Tus] to make one.
type Tus struct {
	srv   *Server
	store *tusStore
	tusd  *handler.UnroutedHandler
	mux   http.Handler
}

// ownerKey carries the caller's owner in a request's context to the store.
type ownerKey struct{}

// Tus returns the tus handler of s.
func (s *Server) Tus(cfg TusConfig) (*Tus, error) {
	if cfg.Dir == "" {
		return nil, errors.New("fileserve: TusConfig.Dir is empty; name the folder of unfinished uploads")
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("fileserve: folder of unfinished uploads: %w", err)
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultURLTTL
	}
	st := &tusStore{dir: cfg.Dir, srv: s, ttl: cfg.TTL, owner: func(ctx context.Context) string {
		o, _ := ctx.Value(ownerKey{}).(string)
		return o
	}}
	st.quota, _ = s.store.(quota.Reserver)
	st.holdAll()
	composer := handler.NewStoreComposer()
	composer.UseCore(st)
	composer.UseTerminater(st)
	composer.UseLocker(memorylocker.New())
	t := &Tus{srv: s, store: st}
	h, err := handler.NewUnroutedHandler(handler.Config{
		StoreComposer: composer,
		MaxSize:       s.maxUpload,
		BasePath:      s.publicURL + transfer.TusPath,
		// Downloads go through /files/ with the File-Url, never here.
		DisableDownload:           true,
		Cors:                      &handler.CorsConfig{Disable: true},
		Logger:                    xslog.New(xslog.NewTextHandler(io.Discard, nil)),
		PreUploadCreateCallback:   t.create,
		PreFinishResponseCallback: t.finished,
	})
	if err != nil {
		return nil, fmt.Errorf("fileserve: tus handler: %w", err)
	}
	t.tusd = h
	t.mux = h.Middleware(http.HandlerFunc(t.route))
	return t, nil
}

// ServeHTTP serves a request to transfer.TusPath or below.
func (t *Tus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := t.uploadID(r)
	route := spansTus
	if id != "" {
		route = spansTusUpload
	}
	r, span := startHTTP(r, route)
	cw := &countingWriter{ResponseWriter: w}
	t.serve(cw, r)
	t.srv.metrics.upload(cw.status())
	if span.IsRecording() {
		if id == "" { // a created upload's id ends its Location
			id = strings.TrimSpace(cw.Header().Get("Location"))
			id = id[strings.LastIndexByte(id, '/')+1:]
		}
		if tusID(id) {
			span.SetAttributes(attrUploadID.String(id))
		}
		if r.Method == http.MethodPatch && r.ContentLength >= 0 {
			span.SetAttributes(attrBytesIn.Int64(r.ContentLength))
		}
		if off, err := strconv.ParseInt(cw.Header().Get("Upload-Offset"), 10, 64); err == nil {
			span.SetAttributes(attrOffset.Int64(off))
		}
	}
	endHTTP(span, cw.status())
}

func (t *Tus) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions {
		t.mux.ServeHTTP(&tusExtensions{ResponseWriter: w}, r)
		return
	}
	owner, ok := t.srv.caller(w, r)
	if !ok {
		return
	}
	if r.Method == http.MethodPost && metadataBytes(r.Header) > maxTusMetadataBytes {
		httpjson.WriteError(w, http.StatusBadRequest, fmt.Sprintf("Upload-Metadata is %d bytes, more than the %d accepted: send the file name (filename <base64>) and little else", metadataBytes(r.Header), maxTusMetadataBytes))
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), ownerKey{}, owner))
	if id := t.uploadID(r); id != "" {
		// A finished upload names its file on HEAD and PATCH too, so a
		// client whose completing PATCH lost its answer gets the URL.
		if rec, err := t.store.record(owner, id); err == nil {
			h := w.Header()
			if rec.Staged != nil {
				if u, err := t.srv.URL(*rec.Staged); err == nil {
					h.Set(transfer.HeaderFileURL, u)
				}
			} else {
				h.Set("Upload-Expires", rec.expires(t.store.ttl).UTC().Format(http.TimeFormat))
			}
		}
	}
	t.mux.ServeHTTP(w, r)
}

// metadataBytes is the size of a request's Upload-Metadata headers.
func metadataBytes(h http.Header) int {
	n := 0
	for _, v := range h.Values("Upload-Metadata") {
		n += len(v)
	}
	return n
}

// uploadID is the upload id a request's path names, "" for the collection.
func (t *Tus) uploadID(r *http.Request) string {
	rest := r.URL.Path
	if i := strings.Index(rest, transfer.TusPath); i >= 0 {
		rest = rest[i+len(transfer.TusPath):]
	}
	return strings.Trim(rest, "/")
}

// route sends a checked request to tusd's handler of its method.
func (t *Tus) route(w http.ResponseWriter, r *http.Request) {
	id := t.uploadID(r)
	r.URL.Path = id // tusd takes the whole path as the id
	switch {
	case id == "" && r.Method == http.MethodPost:
		t.tusd.PostFile(w, r)
	case id != "" && r.Method == http.MethodHead:
		t.tusd.HeadFile(w, r)
	case id != "" && r.Method == http.MethodPatch:
		t.tusd.PatchFile(w, r)
	case id != "" && r.Method == http.MethodDelete:
		t.tusd.DelFile(w, r)
	case id == "":
		w.Header().Set("Allow", "POST, OPTIONS")
		httpjson.WriteError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+transfer.TusPath+"; create an upload with POST (tus 1.0)")
	default:
		w.Header().Set("Allow", "HEAD, PATCH, DELETE, OPTIONS")
		httpjson.WriteError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on an upload; use HEAD, PATCH or DELETE (tus 1.0), and download the finished file from its File-Url")
	}
}

// create checks a new upload: it must name its file.
func (t *Tus) create(hook handler.HookEvent) (handler.HTTPResponse, handler.FileInfoChanges, error) {
	if tusName(hook.Upload.MetaData) == "" {
		return handler.HTTPResponse{}, handler.FileInfoChanges{}, handler.NewError("ERR_NO_FILENAME",
			"the upload has no file name: send Upload-Metadata with filename <base64 of the name>", http.StatusBadRequest)
	}
	exp := t.srv.now().Add(t.store.ttl).UTC().Format(http.TimeFormat)
	return handler.HTTPResponse{Header: handler.HTTPHeader{"Upload-Expires": exp}}, handler.FileInfoChanges{}, nil
}

// finished adds the File-Url of the staged file to the completing answer.
func (t *Tus) finished(hook handler.HookEvent) (handler.HTTPResponse, error) {
	rec, err := t.store.record(t.store.owner(hook.Context), hook.Upload.ID)
	if err != nil || rec.Staged == nil {
		return handler.HTTPResponse{}, errTusStore
	}
	u, err := t.srv.URL(*rec.Staged)
	if err != nil {
		return handler.HTTPResponse{}, t.store.failed(hook.Context, "sign upload URL", err)
	}
	return handler.HTTPResponse{Header: handler.HTTPHeader{transfer.HeaderFileURL: u}}, nil
}

// Expire removes the uploads created before cutoff (unfinished ones and
// the records of finished ones) and reports how many unfinished uploads
// and bytes it removed. The cleanup sweeper calls it with the staging TTL.
func (t *Tus) Expire(ctx context.Context, cutoff time.Time) (files int, bytes int64, err error) {
	return t.store.expire(ctx, cutoff)
}

// tusExtensions adds "expiration", which this server implements around
// tusd (Upload-Expires, the sweep), to tusd's Tus-Extension list.
type tusExtensions struct{ http.ResponseWriter }

func (w *tusExtensions) WriteHeader(code int) {
	if ext := w.Header().Get("Tus-Extension"); ext != "" && !strings.Contains(ext, "expiration") {
		w.Header().Set("Tus-Extension", ext+",expiration")
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *tusExtensions) Unwrap() http.ResponseWriter { return w.ResponseWriter }
