package transfer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// ErrDigestMismatch is wrapped by the error of a download whose bytes do not
// hash to the sha256 the agent announced for them.
var ErrDigestMismatch = errors.New("sha256 mismatch")

// VerifySHA256 returns a reader that passes r through while hashing it and,
// at its end, fails with an error wrapping ErrDigestMismatch instead of
// io.EOF when the content's sha256 is not want (lowercase or uppercase hex).
// A consumer that writes whole-or-nothing (Save, the client registry) thus
// keeps nothing of a corrupted or substituted file. An empty want checks
// nothing and returns r itself; a want that is not 64 hex digits fails on
// the first read. name is for the error.
func VerifySHA256(r io.Reader, want, name string) io.Reader {
	if want == "" {
		return r
	}
	return &digestReader{r: r, h: sha256.New(), want: strings.ToLower(want), name: name}
}

type digestReader struct {
	r    io.Reader
	h    hash.Hash
	want string
	name string
	err  error
}

func (d *digestReader) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if len(d.want) != sha256.Size*2 {
		d.err = fmt.Errorf("%s: the announced sha256 %q is not 64 hex digits; the agent's result is malformed", d.name, d.want)
		return 0, d.err
	}
	n, err := d.r.Read(p)
	d.h.Write(p[:n])
	if err == io.EOF {
		if got := hex.EncodeToString(d.h.Sum(nil)); got != d.want {
			d.err = fmt.Errorf("%w: %s has sha256 %s, the agent announced %s; the file was changed or cut in transit, nothing was saved — fetch it again",
				ErrDigestMismatch, d.name, got, d.want)
			return n, d.err
		}
	}
	return n, err
}
