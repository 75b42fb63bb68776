package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentura/agentura/fileserve"
	"github.com/minio/minio-go/v7"
)

// s3Object reads a stored file with ranged GETs. The first Read after Open
// or a Seek to a new offset starts one GET from that offset to the end,
// which later Reads continue; http.ServeContent seeks once per range, so a
// download costs one request per range asked for.
type s3Object struct {
	ctx    context.Context // of the request that opened it
	core   minio.Core
	bucket string
	key    string
	size   int64 // from the metadata

	off  int64         // offset of the next Read
	body io.ReadCloser // the GET in progress from off on; nil before the first Read
}

// Read implements io.Reader.
func (o *s3Object) Read(p []byte) (int, error) {
	if o.off >= o.size {
		return 0, io.EOF
	}
	if o.body == nil {
		opts := minio.GetObjectOptions{}
		if o.off > 0 {
			if err := opts.SetRange(o.off, 0); err != nil {
				return 0, err
			}
		}
		body, _, _, err := o.core.GetObject(o.ctx, o.bucket, o.key, opts)
		if err != nil {
			if isNoSuchKey(err) {
				err = fmt.Errorf("%w (deleted while being read)", fileserve.ErrNotFound)
			}
			return 0, fmt.Errorf("s3store: read s3://%s/%s: %w", o.bucket, o.key, err)
		}
		o.body = body
	}
	n, err := o.body.Read(p)
	o.off += int64(n)
	if err == io.EOF && o.off < o.size {
		err = fmt.Errorf("s3store: s3://%s/%s ended after %d of %d bytes: %w", o.bucket, o.key, o.off, o.size, io.ErrUnexpectedEOF)
	}
	return n, err
}

// Seek implements io.Seeker. Seeking to where the next Read would read
// anyway keeps the GET in progress.
func (o *s3Object) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += o.off
	case io.SeekEnd:
		offset += o.size
	default:
		return 0, errors.New("s3store: seek: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("s3store: seek: negative position")
	}
	if offset != o.off && o.body != nil {
		o.body.Close()
		o.body = nil
	}
	o.off = offset
	return offset, nil
}

// Close ends the GET in progress, if any.
func (o *s3Object) Close() error {
	if o.body == nil {
		return nil
	}
	err := o.body.Close()
	o.body = nil
	return err
}
