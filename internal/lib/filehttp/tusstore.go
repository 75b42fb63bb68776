package filehttp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/tus/tusd/v2/pkg/handler"
)

// tusStore is the tusd DataStore of /uploads/tus/. The uploads of an owner
// lie in a folder of their own, dir/<owner key> (fileserve.OwnerKey): an
// unfinished upload is two files there, <id>.part (the bytes received so
// far: its size is the upload's offset) and <id>.json (a tusRecord). The
// completing write hands the .part file to the file store as a staged file
// (Store.Adopt: a rename when dir lies on the store's file system, a copy
// into S3 otherwise), so a tus upload ends as exactly what POST /uploads
// makes.
//
// Counting an owner's unfinished uploads reads that owner's folder alone,
// never another owner's. With a quota (the store is a quota.Reserver),
// an upload reserves its Upload-Length when it is created, and the staged
// file draws on that reservation; the record of a finished upload then
// holds tusRecordCharge until it expires; termination and expiry release
// what is held.
type tusStore struct {
	dir   string
	srv   *Server
	ttl   time.Duration // lifetime of an unfinished upload (the staging TTL)
	owner func(context.Context) string
	quota quota.Reserver // nil: no quota
}

// tusRecord is what the .json file of an upload holds: no more than the
// name of the file of all the Upload-Metadata sent.
type tusRecord struct {
	Owner   string    `json:"owner"`
	Name    string    `json:"name"`
	Size    int64     `json:"size"`
	Created time.Time `json:"created"`
	// Staged is set once the upload is complete and in the store.
	Staged *fileserve.Meta `json:"staged,omitempty"`
}

// expires is when an upload that is not finished by then is swept.
func (r tusRecord) expires(ttl time.Duration) time.Time { return r.Created.Add(ttl) }

// reserved is what the upload holds of its owner's quota: its bytes until
// it is staged (then the staged file counts them), its record's charge
// after (the records of finished uploads are the ones that pile up).
func (r tusRecord) reserved() int64 {
	if r.Staged != nil {
		return tusRecordCharge
	}
	return r.Size
}

// Bounds of an owner's uploads.
const (
	// maxUnfinishedUploads bounds the unfinished uploads of one owner, each
	// up to AGENT_MAX_UPLOAD_BYTES and reserved against the quota.
	maxUnfinishedUploads = 16
	// maxTusMetadataBytes bounds the Upload-Metadata header of a new
	// upload: a name and a few small fields.
	maxTusMetadataBytes = 8 << 10
	// maxTusNameBytes bounds the name kept from the metadata; the store
	// cleans and shortens it further.
	maxTusNameBytes = 255
	// tusRecordCharge is what a record counts against the quota: more than
	// the largest record (a name of maxTusNameBytes escaped in JSON, and
	// the staged file's metadata).
	tusRecordCharge = 4 << 10
)

var (
	errTusTooMany  = handler.NewError("ERR_TOO_MANY_UPLOADS", fmt.Sprintf("you have %d unfinished uploads: finish them, or end them with DELETE, before starting another", maxUnfinishedUploads), http.StatusTooManyRequests)
	errTusTooLarge = handler.NewError("ERR_UPLOAD_TOO_LARGE", "", http.StatusRequestEntityTooLarge)
	errTusQuota    = handler.NewError("ERR_OWNER_QUOTA", "", http.StatusInsufficientStorage)
	errTusStore    = handler.NewError("ERR_UPLOAD_NOT_STORED", "the upload could not be stored; try again later", http.StatusInternalServerError)
	errTusFull     = handler.NewError("ERR_STORAGE_FULL", "the agent's storage is full: what arrived is kept; resume (HEAD for the offset, then PATCH) once the operator has freed space", http.StatusInsufficientStorage)
	// errTusNotYet answers the completing PATCH of an upload whose bytes
	// are all here but which the file store did not take (an S3 outage):
	// the bytes are kept, and the client's resumption (HEAD reports the
	// last byte missing, PATCH sends it) tries again.
	errTusNotYet = withRetryAfter(handler.NewError("ERR_UPLOAD_NOT_STORED_YET",
		"the upload is complete here but the file store did not take it; it is kept until the staging TTL: resume it (HEAD for the offset, then PATCH the rest) to store it", http.StatusServiceUnavailable), 5)
)

// withRetryAfter adds Retry-After: secs to e's answer.
func withRetryAfter(e handler.Error, secs int) handler.Error {
	e.HTTPResponse.Header = handler.HTTPHeader{"Retry-After": fmt.Sprint(secs)}
	return e
}

// errorWithMessage is e answering msg.
func errorWithMessage(e handler.Error, msg string) handler.Error {
	e.Message = msg
	e.HTTPResponse.Body = e.ErrorCode + ": " + msg + "\n"
	return e
}

// ownerDir is the folder of owner's uploads.
func (t *tusStore) ownerDir(owner string) string {
	return filepath.Join(t.dir, fileserve.OwnerKey(owner))
}

func (t *tusStore) path(owner, id, ext string) string {
	return filepath.Join(t.ownerDir(owner), id+ext)
}

// reservation is the quota reservation key of upload id.
func reservation(id string) string { return "tus:" + id }

// NewUpload reserves the upload's bytes against the owner's quota and
// makes its record and empty .part file.
func (t *tusStore) NewUpload(ctx context.Context, info handler.FileInfo) (handler.Upload, error) {
	rec := tusRecord{Owner: t.owner(ctx), Name: tusName(info.MetaData), Size: info.Size, Created: t.srv.now()}
	if rec.Owner == "" {
		return nil, handler.ErrNotFound
	}
	if n, err := t.unfinished(rec.Owner); err != nil {
		return nil, t.failed(ctx, "count uploads", err)
	} else if n >= maxUnfinishedUploads {
		return nil, errTusTooMany
	}
	id := fileserve.NewID()
	if t.quota != nil {
		if err := t.quota.Reserve(ctx, rec.Owner, reservation(id), rec.reserved()); err != nil {
			if qe, ok := errors.AsType[*quota.Error](err); ok {
				return nil, errorWithMessage(errTusQuota, qe.Error())
			}
			return nil, t.failed(ctx, "reserve quota", err)
		}
	}
	up := &tusUpload{store: t, id: id, rec: rec}
	if err := up.create(); err != nil {
		up.remove()
		return nil, t.writeFailed(ctx, "create upload", err)
	}
	return up, nil
}

// unfinished counts the owner's unfinished, unexpired uploads: the .part
// files of its folder whose record is not past its TTL.
func (t *tusStore) unfinished(owner string) (int, error) {
	entries, err := os.ReadDir(t.ownerDir(owner))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	now := t.srv.now()
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".part")
		if !ok {
			continue
		}
		if rec, err := t.record(owner, id); err == nil && rec.Staged == nil && now.Before(rec.expires(t.ttl)) {
			n++
		}
	}
	return n, nil
}

// GetUpload returns the caller's upload id; another owner's, an expired
// one or a malformed id is not found.
func (t *tusStore) GetUpload(ctx context.Context, id string) (handler.Upload, error) {
	owner := t.owner(ctx)
	rec, err := t.record(owner, id)
	if err != nil {
		return nil, err
	}
	if rec.Owner != owner || (rec.Staged == nil && !t.srv.now().Before(rec.expires(t.ttl))) {
		return nil, handler.ErrNotFound
	}
	return &tusUpload{store: t, id: id, rec: rec}, nil
}

// record reads owner's record of id, or fails with handler.ErrNotFound.
func (t *tusStore) record(owner, id string) (tusRecord, error) {
	if owner == "" || !tusID(id) {
		return tusRecord{}, handler.ErrNotFound
	}
	return readTusRecord(t.path(owner, id, ".json"))
}

// readTusRecord reads the record at p, or fails with handler.ErrNotFound.
func readTusRecord(p string) (tusRecord, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return tusRecord{}, handler.ErrNotFound
	}
	var rec tusRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return tusRecord{}, handler.ErrNotFound
	}
	return rec, nil
}

// tusID reports whether id can name an upload: what fileserve.NewID makes,
// nothing that could leave dir.
func tusID(id string) bool {
	return id != "" && len(id) <= 64 && !strings.ContainsFunc(id, func(r rune) bool {
		return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || r == '-')
	})
}

// AsTerminatableUpload enables DELETE (the termination extension).
func (t *tusStore) AsTerminatableUpload(u handler.Upload) handler.TerminatableUpload {
	return u.(*tusUpload)
}

func (t *tusStore) failed(ctx context.Context, what string, err error) error {
	t.srv.log.ErrorContext(ctx, "fileserve: tus "+what, "error", err.Error())
	return errTusStore
}

// writeFailed is the answer to a failed write of an upload's files: a
// full disk says so, without the file's path; the rest is errTusStore.
// The log has the error whole.
func (t *tusStore) writeFailed(ctx context.Context, what string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		t.srv.log.WarnContext(ctx, "fileserve: tus "+what, "error", err.Error())
		return errTusFull
	}
	return t.failed(ctx, what, err)
}

// holdAll counts the uploads in dir against their owners' quota, as they
// were when this process started: read once, at start-up.
func (t *tusStore) holdAll() {
	if t.quota == nil {
		return
	}
	records, _ := filepath.Glob(filepath.Join(t.dir, "*", "*.json"))
	for _, p := range records {
		if rec, err := readTusRecord(p); err == nil && rec.Owner != "" {
			id := strings.TrimSuffix(filepath.Base(p), ".json")
			t.quota.Hold(rec.Owner, reservation(id), rec.reserved())
		}
	}
}

// expire removes the uploads created before cutoff: unfinished ones (their
// bytes count as swept) and the records of finished ones, whose staged
// files the staging rule sweeps; their reservations end. It returns what
// it removed. Files of the layout before owner folders (directly in dir)
// go once older than cutoff.
func (t *tusStore) expire(ctx context.Context, cutoff time.Time) (files int, bytes int64, err error) {
	entries, err := os.ReadDir(t.dir)
	if err != nil {
		return 0, 0, fmt.Errorf("tus uploads: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if ctx.Err() != nil {
			break
		}
		if !e.IsDir() {
			if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
				os.Remove(filepath.Join(t.dir, e.Name())) // the old layout
			}
			continue
		}
		n, b, err := t.expireOwner(filepath.Join(t.dir, e.Name()), cutoff)
		files, bytes = files+n, bytes+b
		if err != nil {
			errs = append(errs, err)
		}
	}
	return files, bytes, errors.Join(errs...)
}

// expireOwner expires the uploads in the folder dir of one owner, and
// removes the folder once empty.
func (t *tusStore) expireOwner(dir string, cutoff time.Time) (files int, bytes int64, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, nil // removed meanwhile
	}
	var errs []error
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			if id, ok := strings.CutSuffix(e.Name(), ".part"); ok && tusOrphan(filepath.Join(dir, id+".json"), e, cutoff) {
				os.Remove(filepath.Join(dir, id+".part")) // a crash between the two creations
			}
			continue
		}
		rec, rerr := readTusRecord(filepath.Join(dir, e.Name()))
		if rerr == nil && !rec.Created.Before(cutoff) {
			continue
		}
		if rerr != nil {
			if fi, err := e.Info(); err != nil || !fi.ModTime().Before(cutoff) {
				continue // being written, or gone
			}
		}
		part := filepath.Join(dir, id+".part")
		if fi, err := os.Stat(part); err == nil && rec.Staged == nil {
			files++
			bytes += fi.Size()
		}
		if err := os.Remove(part); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		if t.quota != nil && rec.Owner != "" {
			t.quota.Release(rec.Owner, reservation(id))
		}
	}
	os.Remove(dir) // fails, as it should, while an upload is in it
	return files, bytes, errors.Join(errs...)
}

// tusOrphan reports whether a .part file has no record and is older than cutoff.
func tusOrphan(record string, e os.DirEntry, cutoff time.Time) bool {
	if _, err := os.Stat(record); err == nil {
		return false
	}
	fi, err := e.Info()
	return err == nil && fi.ModTime().Before(cutoff)
}

// tusName is the file name an upload declared in its Upload-Metadata
// (filename, as tus clients send it, or name), cut to maxTusNameBytes.
func tusName(meta handler.MetaData) string {
	n := cmp.Or(meta["filename"], meta["name"])
	if len(n) > maxTusNameBytes {
		n = strings.ToValidUTF8(n[:maxTusNameBytes], "")
	}
	return n
}

// tusUpload is one upload of a tusStore.
type tusUpload struct {
	store *tusStore
	id    string
	rec   tusRecord
}

// create makes the owner's folder, the empty .part file and the record.
// The sweep may remove an owner folder left empty in between: it tries
// again.
func (u *tusUpload) create() error {
	part := u.store.path(u.rec.Owner, u.id, ".part")
	var err error
	for range 5 {
		if err = os.MkdirAll(filepath.Dir(part), 0o700); err != nil {
			return err
		}
		var f *os.File
		if f, err = os.OpenFile(part, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
			f.Close()
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err != nil {
		return err
	}
	return u.save()
}

// remove deletes the upload's files and ends its reservation.
func (u *tusUpload) remove() error {
	st := u.store
	if err := os.Remove(st.path(u.rec.Owner, u.id, ".part")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Remove(st.path(u.rec.Owner, u.id, ".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if st.quota != nil {
		st.quota.Release(u.rec.Owner, reservation(u.id))
	}
	return nil
}

func (u *tusUpload) save() error {
	b, err := json.Marshal(u.rec)
	if err != nil {
		return err
	}
	tmp := u.store.path(u.rec.Owner, u.id, ".json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, u.store.path(u.rec.Owner, u.id, ".json"))
}

// WriteChunk appends src to the .part file. tusd has checked offset and
// bounds src by Upload-Length; the bound is kept here too, so the file never
// grows past the size declared (and capped by AGENT_MAX_UPLOAD_BYTES).
func (u *tusUpload) WriteChunk(ctx context.Context, offset int64, src io.Reader) (int64, error) {
	f, err := os.OpenFile(u.store.path(u.rec.Owner, u.id, ".part"), os.O_WRONLY, 0)
	if err != nil {
		return 0, u.store.failed(ctx, "open upload", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, u.store.failed(ctx, "seek upload", err)
	}
	w := &partWriter{f: f}
	n, err := io.Copy(w, io.LimitReader(src, u.rec.Size-offset))
	if w.err != nil {
		// What was written stays: the client resumes from the offset a
		// HEAD reports once the disk has room.
		return n, u.store.writeFailed(ctx, "write upload", w.err)
	}
	// A read error: what arrived before the connection broke stays, and
	// the client resumes from the offset a HEAD reports.
	return n, err
}

// partWriter writes to a .part file and keeps its write error apart from
// the read errors of the request body.
type partWriter struct {
	f   *os.File
	err error
}

func (w *partWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// GetInfo reports the upload; its offset is the size of the .part file,
// but for the last byte of a complete upload that is not stored yet (the
// store failed to take it): HEAD then asks the client for that byte, and
// the PATCH that brings it stores the upload.
func (u *tusUpload) GetInfo(ctx context.Context) (handler.FileInfo, error) {
	info := handler.FileInfo{ID: u.id, Size: u.rec.Size, MetaData: handler.MetaData{"filename": u.rec.Name}, Offset: u.rec.Size}
	if u.rec.Staged != nil {
		return info, nil
	}
	fi, err := os.Stat(u.store.path(u.rec.Owner, u.id, ".part"))
	if err != nil {
		return handler.FileInfo{}, handler.ErrNotFound
	}
	info.Offset = fi.Size()
	if info.Offset == info.Size && info.Size > 0 {
		info.Offset--
	}
	return info, nil
}

// GetReader is not served: downloads go through /files/ once complete.
func (u *tusUpload) GetReader(context.Context) (io.ReadCloser, error) {
	return nil, handler.ErrNotImplemented
}

// FinishUpload hands the complete .part file to the store as a staged file
// (drawing on the upload's reservation) and notes its metadata in the
// record. An upload over the quota or the size cap is removed; one the
// store fails to take (an outage) is kept for the client to resume.
func (u *tusUpload) FinishUpload(ctx context.Context) (err error) {
	if u.rec.Staged != nil {
		return nil
	}
	ctx, span := startFinish(ctx, u.id, u.rec.Size)
	defer func() { endFinish(span, u.rec.Staged, err) }()
	srv := u.store.srv
	part := u.store.path(u.rec.Owner, u.id, ".part")
	m, err := srv.store.Adopt(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: u.rec.Owner, Name: u.rec.Name, MaxBytes: srv.maxUpload, Reservation: reservation(u.id)}, part)
	if err != nil {
		if qe, overQuota := errors.AsType[*quota.Error](err); overQuota {
			u.remove() // tusd never finishes a complete upload twice
			return errorWithMessage(errTusQuota, qe.Error())
		}
		if errors.Is(err, fileserve.ErrTooLarge) {
			u.remove()
			return errorWithMessage(errTusTooLarge, srv.tooLarge())
		}
		if _, serr := os.Stat(part); serr != nil || u.rec.Size == 0 {
			// Nothing left to resume from.
			u.remove()
			return u.store.failed(ctx, "store upload", err)
		}
		srv.log.WarnContext(ctx, "fileserve: tus: the store did not take a complete upload; it is kept for the client to resume", "id", u.id, "error", err.Error())
		return errTusNotYet
	}
	u.rec.Staged = &m
	if err := u.save(); err != nil {
		srv.store.Delete(ctx, m.Area, m.Owner, m.ID)
		return u.store.failed(ctx, "note finished upload", err)
	}
	if u.store.quota != nil {
		u.store.quota.Hold(u.rec.Owner, reservation(u.id), u.rec.reserved())
	}
	os.Remove(part) // Adopt moved or copied it
	return nil
}

// Terminate removes the upload (DELETE) and ends its reservation. A
// finished upload's staged file stays until the staging TTL; only the
// record goes.
func (u *tusUpload) Terminate(ctx context.Context) error {
	if err := u.remove(); err != nil {
		return u.store.failed(ctx, "terminate upload", err)
	}
	return nil
}
