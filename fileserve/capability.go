package fileserve

import (
	"context"
	"time"
)

// Capabilities a Store may have beyond the Store interface. A program asks
// for them with a type assertion on the store it opened, as net/http asks a
// ResponseWriter for http.Flusher, or with [As], which also looks below
// wrappers (QuotaStore, TTLStore) that hide them.

// Presigner hands out short-lived URLs from which a client fetches a
// file's content straight from where it is stored. The S3 store
// (fileserve/s3store) is one.
type Presigner interface {
	// Presign returns a URL of m's content, valid for ttl, whose response
	// carries contentType and the Content-Disposition disposition.
	Presign(ctx context.Context, m Meta, ttl time.Duration, contentType, disposition string) (string, error)
}

// LocalRoot is a store whose files lie in a folder of the local file
// system, as DiskStore's do. A file made under Root (outside the store's own
// sub-folders) is on the store's file system, so Adopt takes it by rename,
// without a copy; agentcore keeps its per-call work folders there.
type LocalRoot interface {
	// Root returns the absolute path of the store's folder.
	Root() string
}

var _ LocalRoot = (*DiskStore)(nil)

// LocalPath is a LocalRoot that can name where each file's content lies
// under Root, so that a web server in front of the agent, reading the same
// folder, can send it (nginx's X-Accel-Redirect) once the agent has
// checked the request.
type LocalPath interface {
	LocalRoot
	// ContentPath returns the slash-separated path of m's content
	// relative to Root.
	ContentPath(m Meta) string
}

var _ LocalPath = (*DiskStore)(nil)

// SmallReader is a store that reads a small file whole from a cache of
// files it keeps open: a download of a few KiB then costs a check that the
// file is still there and one read, where Open, Read and Close cost four
// system calls (DiskStore: an fstat and a pread against openat, fcntl, read
// and close). The HTTP download handler asks it first for a plain GET.
type SmallReader interface {
	// ReadSmall reads the content of a file of at most len(buf) bytes into
	// buf and returns its metadata and content (buf[:m.Size]). For a larger
	// file it returns the metadata and ok false, having read nothing. A
	// missing file, or another owner's, is ErrNotFound as with Open; a file
	// deleted returns ErrNotFound from then on, even while others read it.
	ReadSmall(ctx context.Context, area Area, owner, id string, buf []byte) (m Meta, content []byte, ok bool, err error)
}

var _ SmallReader = (*DiskStore)(nil)

// Wrapper is a store that adds something to another (a quota, a time to
// live) and hands out the store it wraps, so that a program can still find
// that store's capabilities, as errors.Unwrap finds a wrapped error.
type Wrapper interface {
	Store
	// Unwrap returns the store this one wraps.
	Unwrap() Store
}

// As finds the first store in st's chain (st, then each Wrapper's Unwrap)
// that has the capability T, as errors.As finds an error of a type.
//
// Ask As for capabilities about where and how a store keeps its files
// (LocalRoot, RecordStore, ExpiryIndex, Presigner once the file
// is checked): they pass through a wrapper unchanged. A capability that
// reads files for a caller (SmallReader) must be asked of the wrapper
// itself, which checks what it adds (TTLStore.SmallReader): found below it,
// it would skip that check.
func As[T any](st Store) (T, bool) {
	for st != nil {
		if c, ok := st.(T); ok {
			return c, true
		}
		w, ok := st.(Wrapper)
		if !ok {
			break
		}
		st = w.Unwrap()
	}
	var zero T
	return zero, false
}
