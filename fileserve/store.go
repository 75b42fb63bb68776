// Package fileserve keeps the files an agent hands out and takes in.
//
// Files live in a [Store] under a server-made random id, grouped by area
// (outputs, staging) and owner; the display name, MIME type, size, digest and
// times are metadata. Store is the extension point, in the shape of
// gocloud.dev/blob's drivers: [DiskStore] is the local-disk store and the
// default, fileserve/s3store the S3 one, and fileserve/storetest the suite
// every store passes. A program picks a store by URL ([OpenStore], with the
// schemes drivers register through [RegisterScheme]) or hands one to
// agentcore.Config.Store. What a store can do beyond the interface is found
// through small capability interfaces: [Presigner], [LocalRoot].
package fileserve

import (
	"context"
	"errors"
	"io"
	"time"
)

// Area separates files by purpose and lifetime.
type Area string

// The areas of a store.
const (
	// Outputs holds files produced by tools, kept for AGENT_OUTPUT_TTL.
	Outputs Area = "outputs"
	// Staging holds inputs uploaded ahead of a tool call, kept for AGENT_STAGING_TTL.
	Staging Area = "staging"
)

// Valid reports whether a is one of the known areas.
func (a Area) Valid() bool { return a == Outputs || a == Staging }

// Meta describes a stored file.
type Meta struct {
	ID       string    `json:"id"`        // a canonical UUID (v7); files from before UUIDs: 32 lowercase hex digits
	Area     Area      `json:"area"`      // outputs or staging
	Owner    string    `json:"owner"`     // who may download it
	Name     string    `json:"name"`      // display name, may hold a sub-path ("images/a.png")
	MIMEType string    `json:"mime_type"` // from content and extension
	Size     int64     `json:"size"`      // bytes
	SHA256   string    `json:"sha256"`    // lowercase hex digest of the content
	Created  time.Time `json:"created"`   // when it was committed to the store
}

// ETag is the strong entity tag of the file's content.
func (m Meta) ETag() string { return `"` + m.SHA256 + `"` }

// NewFile is what a caller tells the store about a file it adds.
type NewFile struct {
	Area     Area
	Owner    string
	Name     string // display name; sanitised by the store
	MIMEType string // optional: detected from content and name when empty
	// MaxBytes caps the size while streaming; 0 means no cap. Over the cap,
	// Put fails with an error wrapping ErrTooLarge and leaves nothing behind.
	MaxBytes int64
	// Pending, when set, is called with the file's final metadata (id
	// included) once its content is stored and before the file becomes
	// visible; an error from it fails the add and leaves nothing behind.
	// A writer that adds several files as one (a call's outputs, see
	// agentcore.Call.FileResponse) records there what to remove should it
	// crash before the last. Every store must call it (storetest checks).
	Pending func(Meta) error
	// Reservation names quota held for this file ahead of its bytes (a
	// resumable upload's, see Reserver): a QuotaStore counts the file
	// against it first. Other stores ignore it.
	Reservation string
}

// Object is an open stored file. It reads and seeks; on local disk it is an
// *os.File, so serving it can use sendfile.
type Object interface {
	io.ReadSeekCloser
}

// Store keeps files. Implementations must make additions atomic (a file is
// either absent or complete and described by its metadata; a crash mid-write
// leaves nothing visible) and must keep an Object readable to its end even if
// the file is deleted while it is read. DiskStore and S3Store implement it,
// and fileserve/storetest is the suite every implementation passes. (An
// S3Store Object fetches lazily: a file deleted between Open and the first
// Read fails that Read; once reading has begun it goes on to the end.)
type Store interface {
	// Put streams r into a new file and returns its metadata.
	Put(ctx context.Context, f NewFile, r io.Reader) (Meta, error)
	// Adopt takes the local file at path into the store, without copying when
	// it lies on the same file system (the file at path is gone afterwards).
	Adopt(ctx context.Context, f NewFile, path string) (Meta, error)
	// Stat returns the metadata of a file, or an error wrapping ErrNotFound.
	Stat(ctx context.Context, area Area, owner, id string) (Meta, error)
	// Open opens a file for reading, or fails with an error wrapping ErrNotFound.
	Open(ctx context.Context, area Area, owner, id string) (Object, Meta, error)
	// Delete removes a file; deleting a missing file is not an error.
	Delete(ctx context.Context, area Area, owner, id string) error
	// Walk calls fn for every file of area, in no particular order. Returning
	// an error from fn stops the walk with that error.
	Walk(ctx context.Context, area Area, fn func(Meta) error) error
	// Prune removes what is left empty or abandoned in area (owner folders
	// without files, temporary files older than olderThan).
	Prune(ctx context.Context, area Area, olderThan time.Time) error
	// Ready reports whether the store can take files now (writable, reachable).
	Ready(ctx context.Context) error
}

// Errors of stores.
var (
	// ErrNotFound: no such file (never stored, swept, or another owner's).
	ErrNotFound = errors.New("file not found")
	// ErrTooLarge: the content exceeded NewFile.MaxBytes while streaming.
	ErrTooLarge = errors.New("file exceeds the size limit")
)
