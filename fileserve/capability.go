package fileserve

import (
	"context"
	"time"
)

// Capabilities a Store may have beyond the Store interface. A program asks
// for them with a type assertion on the store it opened, as net/http asks a
// ResponseWriter for http.Flusher; wrappers of a store hide them.

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
