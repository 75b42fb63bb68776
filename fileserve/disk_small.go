package fileserve

import (
	"container/list"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// The DiskStore keeps the small files it served last open (openFiles), so
// that serving one again is an fstat, which tells whether it was deleted
// meanwhile (by this process or another: its link count is then 0), and a
// pread at offset 0, which readers of one file can do side by side.
const (
	openFilesMax  = 256             // files kept open at most
	openFilesIdle = 1 * time.Minute // a file unused this long is closed
)

// openFile is a file of the cache.
type openFile struct {
	id   string
	f    *os.File
	fd   int
	meta Meta
	used time.Time
	refs int  // readers between acquire and release
	dead bool // out of the cache: closed when the last reader is done
	elem *list.Element
}

// openFiles is a least-recently-used set of open small files, by id.
type openFiles struct {
	mu   sync.Mutex
	byID map[string]*openFile
	lru  list.List // front: most recently used
}

// acquire returns the cached file of id, held for reading until release,
// or nil.
func (o *openFiles) acquire(id string) *openFile {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	o.dropIdleLocked(now)
	of := o.byID[id]
	if of == nil {
		return nil
	}
	of.refs++
	of.used = now
	o.lru.MoveToFront(of.elem)
	return of
}

// dropIdleLocked closes the files not used for openFilesIdle (a file
// deleted by another process holds its space while it is open).
func (o *openFiles) dropIdleLocked(now time.Time) {
	idle := now.Add(-openFilesIdle)
	for e := o.lru.Back(); e != nil && e.Value.(*openFile).used.Before(idle); e = o.lru.Back() {
		o.dropLocked(e.Value.(*openFile))
	}
}

// release ends a read of of.
func (o *openFiles) release(of *openFile) {
	o.mu.Lock()
	defer o.mu.Unlock()
	of.refs--
	if of.dead && of.refs == 0 {
		of.f.Close()
	}
}

// add caches the open file f of m, and closes what no longer fits or was
// not used for openFilesIdle (acquire closes those too). f is the cache's
// from then on.
func (o *openFiles) add(f *os.File, m Meta) {
	of := &openFile{id: m.ID, f: f, fd: int(f.Fd()), meta: m, used: time.Now()}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byID == nil {
		o.byID = map[string]*openFile{}
	}
	if old := o.byID[m.ID]; old != nil {
		o.dropLocked(old) // another reader cached it first
	}
	of.elem = o.lru.PushFront(of)
	o.byID[m.ID] = of
	for o.lru.Len() > openFilesMax {
		o.dropLocked(o.lru.Back().Value.(*openFile))
	}
	o.dropIdleLocked(of.used)
}

// forget drops id from the cache (the file was deleted).
func (o *openFiles) forget(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if of := o.byID[id]; of != nil {
		o.dropLocked(of)
	}
}

// dropLocked takes of out of the cache, closing it unless it is being read.
func (o *openFiles) dropLocked(of *openFile) {
	if o.byID[of.id] == of {
		delete(o.byID, of.id)
	}
	o.lru.Remove(of.elem)
	of.dead = true
	if of.refs == 0 {
		of.f.Close()
	}
}

// ReadSmall reads a file of at most len(buf) bytes whole (SmallReader):
// from the cache of open files when it is there and still linked, else
// through Open (its checks and errors), after which it is cached.
func (d *DiskStore) ReadSmall(ctx context.Context, area Area, owner, id string, buf []byte) (Meta, []byte, bool, error) {
	if _, err := d.fileDir(area, owner, id); err != nil {
		return Meta{}, nil, false, err
	}
	if of := d.open.acquire(id); of != nil {
		m, content, ok := readOpen(of, buf)
		d.open.release(of)
		if ok {
			if m.Area != area || m.Owner != owner {
				return Meta{}, nil, false, notFound(area, id)
			}
			return m, content, true, nil
		}
		d.open.forget(id) // deleted, or unreadable: look again
	}
	if m, ok := d.metas.Get(id); ok && m.Size > int64(len(buf)) && m.Area == area && m.Owner == owner {
		return m, nil, false, nil // too big for buf: Open it (which checks that it is there)
	}
	obj, m, err := d.Open(ctx, area, owner, id)
	if err != nil {
		return Meta{}, nil, false, err
	}
	f := obj.(*os.File) // Open's Object is an *os.File
	if m.Size > int64(len(buf)) {
		f.Close()
		return m, nil, false, nil
	}
	if _, err := io.ReadFull(f, buf[:m.Size]); err != nil {
		f.Close()
		return Meta{}, nil, false, fmt.Errorf("fileserve: read %s file %s: %w", area, id, err)
	}
	d.open.add(f, m)
	return m, buf[:m.Size], true, nil
}

// readOpen reads the cached file of into buf, and reports false when the
// file was deleted (no link left), does not fit buf, or cannot be read.
func readOpen(of *openFile, buf []byte) (Meta, []byte, bool) {
	var st syscall.Stat_t
	if err := syscall.Fstat(of.fd, &st); err != nil || st.Nlink == 0 || of.meta.Size > int64(len(buf)) {
		return Meta{}, nil, false
	}
	content := buf[:of.meta.Size]
	for n := 0; n < len(content); {
		k, err := syscall.Pread(of.fd, content[n:], int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil || k == 0 {
			return Meta{}, nil, false
		}
		n += k
	}
	return of.meta, content, true
}
