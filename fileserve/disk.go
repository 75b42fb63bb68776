//go:build unix

package fileserve

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentura/agentura/filename"
	"github.com/agentura/agentura/filetype"
	"github.com/agentura/agentura/internal/lib/boundedmap"
)

// Names inside a file's folder and the store root.
const (
	dataFile = "data"
	metaFile = "meta.json"
	tmpDir   = "tmp"
)

// DiskStore is the local-disk Store, the default.
//
// Its layout under the root is <area>/<ownerkey>/<id>/{data,meta.json}, where
// ownerkey is the first 32 hex digits of the SHA-256 of the owner (owner
// strings never reach a path) and id is the file id (a UUID). A file is
// written into a folder under tmp/ and renamed into place once its content
// and metadata are on disk, so it is either absent or complete; just before,
// a line is appended to the expiry index, <root>/index/<area>/<minute>.idx
// (see [ExpiryIndex]), so that a sweep finds expired files without reading
// the metadata of every file. Deleting
// renames the folder away before removing it, so a file that is open keeps
// reading to its end.
//
// A DiskStore is safe for concurrent use, also by several processes sharing
// the root.
type DiskStore struct {
	root string
	// adoptRename moves a file into the store in Adopt; it is os.Rename
	// except in tests, which make it fail with EXDEV.
	adoptRename func(oldpath, newpath string) error
	metas       *boundedmap.Map[string, Meta]
	// open holds small files served lately open (ReadSmall).
	open openFiles
	// owners is held shared while a file is moved into its owner folder and
	// exclusively while Prune removes empty owner folders. Across processes,
	// Prune's age limit and commit's retry cover the same race.
	owners sync.RWMutex
	// inflight holds the temporary folders of writes in progress in this
	// process, which Prune leaves alone whatever their age.
	inflight sync.Map
	// tempTag names this process in its temporary folders (TempOwners).
	tempTag atomic.Pointer[string]
}

var _ Store = (*DiskStore)(nil)

// NewDiskStore opens the store at root, creating root and its folders
// outputs, staging and tmp if they do not exist.
func NewDiskStore(root string) (*DiskStore, error) {
	if root == "" {
		return nil, errors.New("fileserve: the store root is empty; set AGENT_DATA_DIR or AGENT_STORAGE_URL")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("fileserve: resolve store root %q: %w", root, err)
	}
	for _, dir := range []string{string(Outputs), string(Staging), tmpDir, IndexDir} {
		if err := os.MkdirAll(filepath.Join(abs, dir), 0o700); err != nil {
			return nil, fmt.Errorf("fileserve: create store folder: %w (check that the data directory is writable)", err)
		}
	}
	return &DiskStore{root: abs, adoptRename: os.Rename, metas: newMetaCache()}, nil
}

// Root returns the absolute path of the store's root folder.
func (d *DiskStore) Root() string { return d.root }

// Put streams r into a new file and returns its metadata. The content is
// hashed and its type detected while it streams; over f.MaxBytes, or when r
// fails or ctx ends, nothing is left behind.
func (d *DiskStore) Put(ctx context.Context, f NewFile, r io.Reader) (Meta, error) {
	if err := f.Check(ctx); err != nil {
		return Meta{}, err
	}
	dir, err := d.mkTemp("add-")
	if err != nil {
		return Meta{}, err
	}
	defer d.inflight.Delete(dir)
	m, err := writeData(ctx, dir, f, r)
	if err == nil {
		m, err = d.commit(dir, m, f.Pending)
	}
	if err != nil {
		os.RemoveAll(dir)
		return Meta{}, fmt.Errorf("fileserve: store %q: %w", f.Name, err)
	}
	return m, nil
}

// Adopt takes the regular file at path into the store. On the same file
// system it is renamed, not copied, and read once for its digest and type;
// across file systems it is copied and then removed. On failure the file is
// left at path.
func (d *DiskStore) Adopt(ctx context.Context, f NewFile, path string) (Meta, error) {
	if err := f.Check(ctx); err != nil {
		return Meta{}, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return Meta{}, fmt.Errorf("fileserve: adopt: %w", err)
	}
	if f, err = f.Adoptable(path, fi); err != nil {
		return Meta{}, err
	}
	dir, err := d.mkTemp("adopt-")
	if err != nil {
		return Meta{}, err
	}
	defer d.inflight.Delete(dir)
	data := filepath.Join(dir, dataFile)
	var m Meta
	switch err = d.adoptRename(path, data); {
	case err == nil:
		if m, err = scanData(ctx, data, f); err == nil {
			m, err = d.commit(dir, m, f.Pending)
		}
		if err != nil {
			os.Rename(data, path) // give the file back to the caller
		}
	case errors.Is(err, syscall.EXDEV):
		if m, err = d.copyIn(ctx, dir, f, path); err == nil {
			m, err = d.commit(dir, m, f.Pending)
		}
		if err == nil {
			// The copy is committed; failing to remove the original only
			// leaves the caller's file where it was.
			os.Remove(path)
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return Meta{}, fmt.Errorf("fileserve: adopt %s: %w", path, err)
	}
	return m, nil
}

// Adoptable checks the file at path, described by fi (from os.Lstat or an
// opened file's Stat), before a store's Adopt takes it in: it must be a
// regular file within f.MaxBytes. It returns f with the file's own name when
// f has none.
func (f NewFile) Adoptable(path string, fi fs.FileInfo) (NewFile, error) {
	if !fi.Mode().IsRegular() {
		return f, fmt.Errorf("fileserve: adopt %s: not a regular file (symbolic links, folders and devices cannot be stored)", path)
	}
	if f.MaxBytes > 0 && fi.Size() > f.MaxBytes {
		return f, fmt.Errorf("fileserve: adopt %s: %d bytes, more than %d: %w", path, fi.Size(), f.MaxBytes, ErrTooLarge)
	}
	if f.Name == "" {
		f.Name = fi.Name()
	}
	return f, nil
}

// copyIn copies the file at path into dir, as Put does.
func (d *DiskStore) copyIn(ctx context.Context, dir string, f NewFile, path string) (Meta, error) {
	src, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return Meta{}, err
	}
	defer src.Close()
	return writeData(ctx, dir, f, src)
}

// Stat returns the metadata of a file, or an error wrapping ErrNotFound.
func (d *DiskStore) Stat(ctx context.Context, area Area, owner, id string) (Meta, error) {
	dir, err := d.fileDir(area, owner, id)
	if err != nil {
		return Meta{}, err
	}
	return d.meta(dir, area, owner, id, false)
}

// Open opens a file for reading. The Object is an *os.File.
func (d *DiskStore) Open(ctx context.Context, area Area, owner, id string) (Object, Meta, error) {
	dir, err := d.fileDir(area, owner, id)
	if err != nil {
		return nil, Meta{}, err
	}
	// Open the content first: once it is open, a concurrent Delete cannot
	// take it away, and the metadata of an existing id never changes.
	f, err := openRead(filepath.Join(dir, dataFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Meta{}, notFound(area, id)
		}
		return nil, Meta{}, fmt.Errorf("fileserve: open %s file %s: %w", area, id, err)
	}
	m, err := d.meta(dir, area, owner, id, true)
	if err != nil {
		f.Close()
		return nil, Meta{}, err
	}
	return f, m, nil
}

// openRead opens a regular file for reading as os.Open does, without
// registering it with the network poller, which cannot wait on regular
// files anyway: two system calls fewer on each download (the poller's
// registration and the switch to non-blocking mode), and as many on close.
func openRead(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// Delete removes a file. Deleting a missing file, or with an invalid id, is
// not an error. A reader that has the file open reads on to its end.
func (d *DiskStore) Delete(ctx context.Context, area Area, owner, id string) error {
	dir, err := d.fileDir(area, owner, id)
	if err != nil {
		return nil
	}
	tomb := d.tempName("del-")
	if err := os.Rename(dir, tomb); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("fileserve: delete %s file %s: %w", area, id, err)
	}
	d.metas.Forget(id)
	d.open.forget(id)
	if err := os.RemoveAll(tomb); err != nil {
		return fmt.Errorf("fileserve: %s file %s is deleted, but removing its remains failed (Prune retries): %w", area, id, err)
	}
	return nil
}

// Walk calls fn with the metadata of every file of area. Folders whose
// metadata cannot be read are skipped (Prune removes them once old).
func (d *DiskStore) Walk(ctx context.Context, area Area, fn func(Meta) error) error {
	if !area.Valid() {
		return fmt.Errorf("fileserve: walk: unknown area %q (want outputs or staging)", area)
	}
	return d.eachFileDir(area, func(dir string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := readMeta(dir)
		if err != nil || m.Area != area {
			return nil
		}
		return fn(m)
	})
}

// Prune removes, when last changed before olderThan: the empty owner folders
// of area, file folders of area whose metadata is missing or unreadable, and
// everything in tmp/ (the remains of writes and deletes interrupted by a
// crash). It reads the metadata of every file of area and the whole index,
// and gives each file without an index line (written by an older layout,
// or whose line a crash lost) its line. Tidy is the cheap part of Prune that
// a frequent sweep runs instead, and the one that removes index buckets.
func (d *DiskStore) Prune(ctx context.Context, area Area, olderThan time.Time) error {
	if !area.Valid() {
		return fmt.Errorf("fileserve: prune: unknown area %q (want outputs or staging)", area)
	}
	indexed, err := d.indexed(ctx, area)
	if err != nil {
		return err
	}
	var errs []error
	err = d.eachFileDir(area, func(dir string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := readMeta(dir)
		switch {
		case err == nil && m.Area == area:
			if !indexed[m.ID] {
				errs = append(errs, d.writeIndex(m))
			}
		case err != nil && lastChange(dir).Before(olderThan):
			errs = append(errs, os.RemoveAll(dir))
		}
		return nil
	})
	if err != nil {
		return err
	}
	errs = append(errs, d.pruneOwners(area, olderThan), d.pruneTmp(olderThan))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("fileserve: prune %s: %w", area, err)
	}
	return nil
}

// pruneOwners removes the empty owner folders of area whose own entries last
// changed before olderThan.
func (d *DiskStore) pruneOwners(area Area, olderThan time.Time) error {
	owners, err := os.ReadDir(filepath.Join(d.root, string(area)))
	if err != nil {
		return err
	}
	d.owners.Lock()
	defer d.owners.Unlock()
	for _, o := range owners {
		p := filepath.Join(d.root, string(area), o.Name())
		// The folder's own time changes when a file enters or leaves it.
		if fi, err := o.Info(); err == nil && o.IsDir() && fi.ModTime().Before(olderThan) {
			os.Remove(p) // fails, as it should, unless the folder is empty
		}
	}
	return nil
}

// pruneTmp removes what in tmp/ is not a write in progress in this process
// and last changed before olderThan.
func (d *DiskStore) pruneTmp(olderThan time.Time) error {
	tmp := filepath.Join(d.root, tmpDir)
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		p := filepath.Join(tmp, e.Name())
		if _, busy := d.inflight.Load(p); !busy && lastChange(p).Before(olderThan) {
			errs = append(errs, os.RemoveAll(p))
		}
	}
	return errors.Join(errs...)
}

// readyFreeBytes is the least free space a disk store needs to be ready,
// and readyProbeBytes the size of the file its probe writes: a store that
// can create only an empty file (a full disk) is not ready.
const (
	readyFreeBytes  = 16 << 20
	readyProbeBytes = 64 << 10
)

// Ready reports whether the store can take files: it has readyFreeBytes
// free, and a file of readyProbeBytes can be written and removed in its tmp
// folder.
func (d *DiskStore) Ready(ctx context.Context) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(d.root, &st); err == nil {
		if free := int64(st.Bavail) * int64(st.Bsize); free < readyFreeBytes {
			return fmt.Errorf("fileserve: store %s is full: %d bytes free, less than the %d a file needs; free space or grow the volume: %w", d.root, free, readyFreeBytes, syscall.ENOSPC)
		}
	}
	f, err := os.CreateTemp(filepath.Join(d.root, tmpDir), "ready-")
	if err != nil {
		return fmt.Errorf("fileserve: store %s is not writable: %w", d.root, err)
	}
	_, err = f.Write(make([]byte, readyProbeBytes))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	rerr := os.Remove(f.Name())
	if err != nil {
		return fmt.Errorf("fileserve: store %s cannot take a file of %d bytes (full?): %w", d.root, readyProbeBytes, err)
	}
	if rerr != nil {
		return fmt.Errorf("fileserve: store %s: remove probe file: %w", d.root, rerr)
	}
	return nil
}

// ContentPath returns the path of m's content relative to Root:
// <area>/<ownerkey>/<id>/data.
func (d *DiskStore) ContentPath(m Meta) string {
	return string(m.Area) + "/" + OwnerKey(m.Owner) + "/" + m.ID + "/" + dataFile
}

// fileDir returns the folder of a file after checking every part of the
// name; anything invalid is not found.
func (d *DiskStore) fileDir(area Area, owner, id string) (string, error) {
	if !area.Valid() || owner == "" || !ValidID(id) {
		return "", fmt.Errorf("fileserve: %w (invalid area, owner or id)", ErrNotFound)
	}
	return filepath.Join(d.root, string(area), OwnerKey(owner), id), nil
}

// meta returns the checked metadata of the file in dir. cached allows an
// answer from memory, which is right only once the file's content is open:
// the metadata of an id never changes, but the file may be gone.
func (d *DiskStore) meta(dir string, area Area, owner, id string, cached bool) (Meta, error) {
	m, ok := Meta{}, false
	if cached {
		m, ok = d.metas.Get(id)
	}
	if !ok {
		var err error
		m, err = readMeta(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return Meta{}, notFound(area, id)
		}
		if err != nil {
			return Meta{}, fmt.Errorf("fileserve: %s file %s: %w", area, id, err)
		}
		d.metas.Put(m.ID, m)
	}
	if m.ID != id || m.Area != area || m.Owner != owner {
		return Meta{}, notFound(area, id)
	}
	return m, nil
}

// mkTemp makes a fresh folder under tmp/ and marks it in flight; the caller
// removes the mark when done.
func (d *DiskStore) mkTemp(prefix string) (string, error) {
	dir := d.tempName(prefix)
	d.inflight.Store(dir, true)
	if err := os.Mkdir(dir, 0o700); err != nil {
		d.inflight.Delete(dir)
		return "", fmt.Errorf("fileserve: create temporary folder: %w (is the data directory writable and not full?)", err)
	}
	return dir, nil
}

// commit gives the file in the temporary folder dir an id, writes its
// metadata, tells pending (NewFile.Pending) and renames the folder into place.
func (d *DiskStore) commit(dir string, m Meta, pending func(Meta) error) (Meta, error) {
	m.ID = NewID()
	m.Created = time.Now().UTC()
	if pending != nil {
		if err := pending(m); err != nil {
			return Meta{}, err
		}
	}
	if err := writeMeta(dir, m); err != nil {
		return Meta{}, err
	}
	if err := syncDir(dir); err != nil {
		return Meta{}, err
	}
	parent := filepath.Join(d.root, string(m.Area), OwnerKey(m.Owner))
	final := filepath.Join(parent, m.ID)
	d.owners.RLock()
	defer d.owners.RUnlock()
	if err := d.writeIndex(m); err != nil {
		return Meta{}, err
	}
	var err error
	// Another process's Prune may remove the owner folder between MkdirAll
	// and Rename; retry.
	for range 5 {
		if err = os.MkdirAll(parent, 0o700); err != nil {
			return Meta{}, fmt.Errorf("create owner folder: %w", err)
		}
		if err = os.Rename(dir, final); !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return Meta{}, fmt.Errorf("move file into place: %w", err)
	}
	syncDir(parent) // durability of the rename; the file is already visible
	return m, nil
}

// eachFileDir calls fn with every folder area/*/<id>.
func (d *DiskStore) eachFileDir(area Area, fn func(dir string) error) error {
	areaDir := filepath.Join(d.root, string(area))
	owners, err := os.ReadDir(areaDir)
	if err != nil {
		return fmt.Errorf("fileserve: list %s: %w", areaDir, err)
	}
	for _, o := range owners {
		if !o.IsDir() {
			continue
		}
		ownerDir := filepath.Join(areaDir, o.Name())
		ids, err := os.ReadDir(ownerDir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // pruned meanwhile
			}
			return fmt.Errorf("fileserve: list %s: %w", ownerDir, err)
		}
		for _, e := range ids {
			if e.IsDir() && ValidID(e.Name()) {
				if err := fn(filepath.Join(ownerDir, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Check validates what a caller says about a file it adds, and that ctx is
// not over yet; a store's Put and Adopt call it first.
func (f NewFile) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !f.Area.Valid() {
		return fmt.Errorf("fileserve: unknown area %q (want outputs or staging)", f.Area)
	}
	if f.Owner == "" {
		return errors.New("fileserve: a file needs an owner (use \"anonymous\" when there is no authentication)")
	}
	return nil
}

// writeData streams r into dir/data and describes the result. The id and
// creation time are set by commit.
func writeData(ctx context.Context, dir string, f NewFile, r io.Reader) (Meta, error) {
	out, err := os.OpenFile(filepath.Join(dir, dataFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Meta{}, err
	}
	defer out.Close()
	sr := NewContentReader(ctx, r, f.MaxBytes)
	// writerOnly: *os.File's ReadFrom would copy with its own small buffer.
	if _, err := io.CopyBuffer(writerOnly{out}, sr, make([]byte, copyBufSize)); err != nil {
		return Meta{}, err
	}
	if err := out.Sync(); err != nil {
		return Meta{}, fmt.Errorf("sync content: %w", err)
	}
	if err := out.Close(); err != nil {
		return Meta{}, fmt.Errorf("close content: %w", err)
	}
	return sr.Meta(f), nil
}

// scanData reads the file at path once for its size, digest and type, and
// syncs it to disk.
func scanData(ctx context.Context, path string, f NewFile) (Meta, error) {
	in, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return Meta{}, err
	}
	defer in.Close()
	sr := NewContentReader(ctx, in, f.MaxBytes)
	if _, err := io.CopyBuffer(writerOnly{io.Discard}, sr, make([]byte, copyBufSize)); err != nil {
		return Meta{}, err
	}
	if err := in.Sync(); err != nil {
		return Meta{}, fmt.Errorf("sync content: %w", err)
	}
	return sr.Meta(f), nil
}

// describe builds the metadata of a written file.
func describe(f NewFile, size int64, sum, head []byte) Meta {
	name := filename.Clean(f.Name)
	mimeType := f.MIMEType
	if mimeType == "" {
		mimeType = filetype.Detect(head, name)
	}
	return Meta{
		Area:     f.Area,
		Owner:    f.Owner,
		Name:     name,
		MIMEType: mimeType,
		Size:     size,
		SHA256:   hex.EncodeToString(sum),
	}
}

// writeMeta writes dir/meta.json and syncs it.
func writeMeta(dir string, m Meta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	out, err := os.OpenFile(filepath.Join(dir, metaFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := out.Write(b); err != nil {
		return fmt.Errorf("write metadata: %w", err)
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("sync metadata: %w", err)
	}
	return out.Close()
}

// readMeta reads dir/meta.json.
func readMeta(dir string) (Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return Meta{}, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, fmt.Errorf("metadata %s is corrupt: %w", filepath.Join(dir, metaFile), err)
	}
	return m, nil
}

// syncDir flushes a folder's entries to disk.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// lastChange is the latest modification time of p and, for a folder, of its
// direct entries: a write in progress keeps its temporary folder young.
func lastChange(p string) time.Time {
	fi, err := os.Lstat(p)
	if err != nil {
		return time.Time{}
	}
	t := fi.ModTime()
	if fi.IsDir() {
		entries, _ := os.ReadDir(p)
		for _, e := range entries {
			if info, err := e.Info(); err == nil && info.ModTime().After(t) {
				t = info.ModTime()
			}
		}
	}
	return t
}

// notFound is the error for a missing file.
func notFound(area Area, id string) error {
	return fmt.Errorf("fileserve: %s file %s: %w", area, id, ErrNotFound)
}

// writerOnly hides the ReadFrom of a writer so that io.CopyBuffer uses the
// buffer it is given.
type writerOnly struct{ io.Writer }
