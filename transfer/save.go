package transfer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentura/agentura/filename"
)

// maxNumbered is how many numbered names Save tries before it gives up.
const maxNumbered = 10000

// Saved is a file Save wrote.
type Saved struct {
	// Path is where it lies.
	Path string
	// Name is its name under the folder, slash-separated: the cleaned name
	// asked for, or a numbered one ("report (2).pdf") when that was taken.
	Name string
	// Size is its length in bytes.
	Size int64
}

// Save writes r into dir under name, cleaned by filename.Clean (so it stays
// inside dir; a sub-path such as "images/chart.png" makes folders), and
// never in place of anything there: when the name is taken — by a file, a
// folder, or a writer racing this one — the file takes the next free name
// of filename.Numbered ("chart (2).png"). The file appears whole or not at
// all: it is written beside its place and hard-linked in, which fails
// rather than replaces. maxBytes > 0 caps the size (an error wrapping
// ErrTooLarge, and nothing saved); perm is the file's mode (0 means 0600),
// and folders it makes get the matching search bits (0644: 0755).
func Save(dir, name string, r io.Reader, maxBytes int64, perm fs.FileMode) (Saved, error) {
	if perm == 0 {
		perm = 0o600
	}
	clean := filename.Clean(name)
	first := filepath.Join(dir, filepath.FromSlash(clean))
	// Folders made for a sub-path: searchable where the file is readable.
	if err := os.MkdirAll(filepath.Dir(first), perm|(perm&0o444)>>2); err != nil {
		return Saved{}, fmt.Errorf("save %s: %w", clean, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(first), ".part-*")
	if err != nil {
		return Saved{}, fmt.Errorf("save %s: %w", clean, err)
	}
	defer os.Remove(tmp.Name()) // the linked name stays
	src := r
	if maxBytes > 0 {
		src = io.LimitReader(r, maxBytes+1)
	}
	n, err := io.Copy(tmp, src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Saved{}, fmt.Errorf("save %s: %w", clean, err)
	}
	if maxBytes > 0 && n > maxBytes {
		return Saved{}, fmt.Errorf("save %s: %w: more than the cap of %d bytes", clean, ErrTooLarge, maxBytes)
	}
	if err := os.Chmod(tmp.Name(), perm); err != nil {
		return Saved{}, fmt.Errorf("save %s: %w", clean, err)
	}
	for i := 1; i <= maxNumbered; i++ {
		cand := filename.Numbered(clean, i)
		path := filepath.Join(dir, filepath.FromSlash(cand))
		err := os.Link(tmp.Name(), path)
		if err == nil {
			return Saved{Path: path, Name: cand, Size: n}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return Saved{}, fmt.Errorf("save %s as %s: %w", clean, path, err)
		}
	}
	return Saved{}, fmt.Errorf("save %s: no free name beside %s", clean, first)
}
