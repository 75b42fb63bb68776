package fileserve

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"

	"github.com/agentura/agentura/filetype"
)

// copyBufSize is the buffer of the streaming copy into the store.
const copyBufSize = 256 << 10

// capWriter passes writes on until more than max bytes in total would have
// been written, then fails with ErrTooLarge. max <= 0 means no cap.
type capWriter struct {
	w   io.Writer
	max int64
	n   int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if c.max > 0 && c.n+int64(len(p)) > c.max {
		return 0, fmt.Errorf("more than %d bytes: %w", c.max, ErrTooLarge)
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// headWriter keeps the first filetype.SniffBytes bytes written to it, for
// type detection without reading the file again.
type headWriter struct{ head []byte }

func (h *headWriter) Write(p []byte) (int, error) {
	if room := filetype.SniffBytes - len(h.head); room > 0 {
		h.head = append(h.head, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// ctxReader fails reads once ctx is done, so an abandoned copy stops.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// readError marks an error of the source reader, as opposed to one of the
// store, in messages.
type readError struct{ err error }

func (e *readError) Error() string { return "read the content: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// sourceReader wraps errors of r into *readError.
type sourceReader struct{ r io.Reader }

func (s sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		err = &readError{err}
	}
	return n, err
}

// ContentReader passes the content of a new file through to where a store
// writes it (a file on disk, an S3 upload) while hashing it, keeping its head
// for type detection, capping its size and stopping when ctx ends: what a
// store's Put needs to describe the file in its Meta. Errors of the source
// reader come back prefixed "read the content: ".
type ContentReader struct {
	src  io.Reader // errors wrapped into *readError, reads fail once ctx ends
	hash hash.Hash
	head headWriter
	cap  capWriter
}

// NewContentReader reads r, failing with an error wrapping ErrTooLarge past
// max bytes (max <= 0: no cap).
func NewContentReader(ctx context.Context, r io.Reader, max int64) *ContentReader {
	s := &ContentReader{src: sourceReader{ctxReader{ctx, r}}, hash: sha256.New()}
	s.cap = capWriter{w: io.MultiWriter(s.hash, &s.head), max: max}
	return s
}

// Read implements io.Reader.
func (s *ContentReader) Read(p []byte) (int, error) {
	n, err := s.src.Read(p)
	if n > 0 {
		if _, werr := s.cap.Write(p[:n]); werr != nil {
			return 0, werr
		}
	}
	return n, err
}

// Meta returns the metadata of what was read so far for the file f: area,
// owner, cleaned name, MIME type (f's, or detected from content and name),
// size and digest. The store sets ID and Created.
func (s *ContentReader) Meta(f NewFile) Meta {
	return describe(f, s.cap.n, s.hash.Sum(nil), s.head.head)
}
