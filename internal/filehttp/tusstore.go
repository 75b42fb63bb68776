package filehttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/tus/tusd/v2/pkg/handler"
)

// tusStore is the tusd DataStore of /uploads/tus/: an unfinished upload is
// two files in dir, <id>.part (the bytes received so far: its size is the
// upload's offset) and <id>.json (a tusRecord). The completing write hands
// the .part file to the file store as a staged file (Store.Adopt: a rename
// when dir lies on the store's file system, a copy into S3 otherwise), so a
// tus upload ends as exactly what POST /uploads makes.
type tusStore struct {
	dir   string
	srv   *Server
	ttl   time.Duration // lifetime of an unfinished upload (the staging TTL)
	owner func(context.Context) string
}

// tusRecord is what the .json file of an upload holds.
type tusRecord struct {
	Owner    string            `json:"owner"`
	Name     string            `json:"name"`
	Size     int64             `json:"size"`
	Created  time.Time         `json:"created"`
	MetaData map[string]string `json:"metadata,omitempty"`
	// Staged is set once the upload is complete and in the store.
	Staged *fileserve.Meta `json:"staged,omitempty"`
}

// expires is when an upload that is not finished by then is swept.
func (r tusRecord) expires(ttl time.Duration) time.Time { return r.Created.Add(ttl) }

// maxUnfinishedUploads bounds the unfinished uploads of one owner, each up
// to AGENT_MAX_UPLOAD_BYTES, so that abandoned uploads cannot fill the
// disk before the sweep takes them.
const maxUnfinishedUploads = 16

var (
	errTusTooMany  = handler.NewError("ERR_TOO_MANY_UPLOADS", fmt.Sprintf("you have %d unfinished uploads: finish them, or end them with DELETE, before starting another", maxUnfinishedUploads), http.StatusTooManyRequests)
	errTusTooLarge = handler.NewError("ERR_UPLOAD_TOO_LARGE", "", http.StatusRequestEntityTooLarge)
	errTusQuota    = handler.NewError("ERR_OWNER_QUOTA", "", http.StatusInsufficientStorage)
	errTusStore    = handler.NewError("ERR_UPLOAD_NOT_STORED", "the upload could not be stored; try again later", http.StatusInternalServerError)
)

func (t *tusStore) path(id, ext string) string { return filepath.Join(t.dir, id+ext) }

// NewUpload makes the record and the empty .part file of a new upload.
func (t *tusStore) NewUpload(ctx context.Context, info handler.FileInfo) (handler.Upload, error) {
	rec := tusRecord{Owner: t.owner(ctx), Name: tusName(info.MetaData), Size: info.Size, Created: t.srv.now(), MetaData: info.MetaData}
	if rec.Owner == "" {
		return nil, handler.ErrNotFound
	}
	if n, err := t.unfinished(rec.Owner); err != nil {
		return nil, t.failed(ctx, "count uploads", err)
	} else if n >= maxUnfinishedUploads {
		return nil, errTusTooMany
	}
	id := fileserve.NewID()
	f, err := os.OpenFile(t.path(id, ".part"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, t.failed(ctx, "create upload", err)
	}
	f.Close()
	up := &tusUpload{store: t, id: id, rec: rec}
	if err := up.save(); err != nil {
		os.Remove(t.path(id, ".part"))
		return nil, t.failed(ctx, "create upload", err)
	}
	return up, nil
}

// unfinished counts the owner's unfinished, unexpired uploads.
func (t *tusStore) unfinished(owner string) (int, error) {
	entries, err := os.ReadDir(t.dir)
	if err != nil {
		return 0, err
	}
	n := 0
	now := t.srv.now()
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		if rec, err := t.record(id); err == nil && rec.Owner == owner && rec.Staged == nil && now.Before(rec.expires(t.ttl)) {
			n++
		}
	}
	return n, nil
}

// GetUpload returns the caller's upload id; another owner's, an expired
// one or a malformed id is not found.
func (t *tusStore) GetUpload(ctx context.Context, id string) (handler.Upload, error) {
	rec, err := t.record(id)
	if err != nil {
		return nil, err
	}
	if rec.Owner != t.owner(ctx) || (rec.Staged == nil && !t.srv.now().Before(rec.expires(t.ttl))) {
		return nil, handler.ErrNotFound
	}
	return &tusUpload{store: t, id: id, rec: rec}, nil
}

// record reads the record of id, or fails with handler.ErrNotFound.
func (t *tusStore) record(id string) (tusRecord, error) {
	if !tusID(id) {
		return tusRecord{}, handler.ErrNotFound
	}
	b, err := os.ReadFile(t.path(id, ".json"))
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

// expire removes the uploads created before cutoff: unfinished ones (their
// bytes count as swept) and the records of finished ones, whose staged
// files the staging rule sweeps. It returns what it removed.
func (t *tusStore) expire(cutoff time.Time) (files int, bytes int64, err error) {
	entries, err := os.ReadDir(t.dir)
	if err != nil {
		return 0, 0, fmt.Errorf("tus uploads: %w", err)
	}
	var errs []error
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			if id, ok := strings.CutSuffix(e.Name(), ".part"); ok && tusOrphan(t.path(id, ".json"), e, cutoff) {
				os.Remove(t.path(id, ".part")) // a crash between the two creations
			}
			continue
		}
		rec, rerr := t.record(id)
		if rerr == nil && !rec.Created.Before(cutoff) {
			continue
		}
		if fi, err := os.Stat(t.path(id, ".part")); err == nil && rec.Staged == nil {
			files++
			bytes += fi.Size()
		}
		if err := os.Remove(t.path(id, ".part")); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(t.path(id, ".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
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
// (filename, as tus clients send it, or name).
func tusName(meta handler.MetaData) string {
	if n := meta["filename"]; n != "" {
		return n
	}
	return meta["name"]
}

// tusUpload is one upload of a tusStore.
type tusUpload struct {
	store *tusStore
	id    string
	rec   tusRecord
}

func (u *tusUpload) save() error {
	b, err := json.Marshal(u.rec)
	if err != nil {
		return err
	}
	tmp := u.store.path(u.id, ".json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, u.store.path(u.id, ".json"))
}

// WriteChunk appends src to the .part file. tusd has checked offset and
// bounds src by Upload-Length; the bound is kept here too, so the file never
// grows past the size declared (and capped by AGENT_MAX_UPLOAD_BYTES).
func (u *tusUpload) WriteChunk(ctx context.Context, offset int64, src io.Reader) (int64, error) {
	f, err := os.OpenFile(u.store.path(u.id, ".part"), os.O_WRONLY, 0)
	if err != nil {
		return 0, u.store.failed(ctx, "open upload", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, u.store.failed(ctx, "seek upload", err)
	}
	n, err := io.Copy(f, io.LimitReader(src, u.rec.Size-offset))
	if err != nil {
		// What arrived before the connection broke stays: the client
		// resumes from the offset a HEAD reports.
		return n, err
	}
	return n, nil
}

// GetInfo reports the upload; its offset is the size of the .part file.
func (u *tusUpload) GetInfo(ctx context.Context) (handler.FileInfo, error) {
	info := handler.FileInfo{ID: u.id, Size: u.rec.Size, MetaData: u.rec.MetaData, Offset: u.rec.Size}
	if u.rec.Staged != nil {
		return info, nil
	}
	fi, err := os.Stat(u.store.path(u.id, ".part"))
	if err != nil {
		return handler.FileInfo{}, handler.ErrNotFound
	}
	info.Offset = fi.Size()
	return info, nil
}

// GetReader is not served: downloads go through /files/ once complete.
func (u *tusUpload) GetReader(context.Context) (io.ReadCloser, error) {
	return nil, handler.ErrNotImplemented
}

// FinishUpload hands the complete .part file to the store as a staged file
// and notes its metadata in the record.
func (u *tusUpload) FinishUpload(ctx context.Context) error {
	if u.rec.Staged != nil {
		return nil
	}
	srv := u.store.srv
	m, err := srv.store.Adopt(ctx, fileserve.NewFile{Area: fileserve.Staging, Owner: u.rec.Owner, Name: u.rec.Name, MaxBytes: srv.maxUpload}, u.store.path(u.id, ".part"))
	if err != nil {
		// tusd never finishes a complete upload twice: one that cannot be
		// stored is removed, so the client's retry learns it is gone.
		u.Terminate(ctx)
		if qe, overQuota := errors.AsType[*fileserve.QuotaError](err); overQuota {
			e := errTusQuota
			e.Message = qe.Error()
			e.HTTPResponse.Body = e.ErrorCode + ": " + e.Message + "\n"
			return e
		}
		if errors.Is(err, fileserve.ErrTooLarge) {
			e := errTusTooLarge
			e.Message = srv.tooLarge()
			e.HTTPResponse.Body = e.ErrorCode + ": " + e.Message + "\n"
			return e
		}
		return u.store.failed(ctx, "store upload", err)
	}
	u.rec.Staged = &m
	if err := u.save(); err != nil {
		srv.store.Delete(ctx, m.Area, m.Owner, m.ID)
		return u.store.failed(ctx, "note finished upload", err)
	}
	os.Remove(u.store.path(u.id, ".part")) // Adopt moved or copied it
	return nil
}

// Terminate removes the upload (DELETE). A finished upload's staged file
// stays until the staging TTL; only the record goes.
func (u *tusUpload) Terminate(ctx context.Context) error {
	if err := os.Remove(u.store.path(u.id, ".part")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return u.store.failed(ctx, "terminate upload", err)
	}
	if err := os.Remove(u.store.path(u.id, ".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return u.store.failed(ctx, "terminate upload", err)
	}
	return nil
}
