package transferclient

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
// rather than replaces. Everything is done through an os.Root of dir, so a
// symbolic link inside dir (a folder of the sub-path, or the name itself)
// never leads the file out of it. maxBytes > 0 caps the size (an error
// wrapping ErrTooLarge, and nothing saved); perm is the file's mode (0
// means 0600), and folders it makes get the matching search bits (0644:
// 0755).
func Save(dir, name string, r io.Reader, maxBytes int64, perm fs.FileMode) (Saved, error) {
	perm = cmp.Or(perm, 0o600)
	clean := filename.Clean(name)
	// dir itself is made if missing (an --out folder named for the first
	// time); what lies below it is made through the root.
	if err := os.MkdirAll(dir, perm|(perm&0o444)>>2); err != nil {
		return Saved{}, fmt.Errorf("save %s: %w", clean, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Saved{}, fmt.Errorf("save %s: %w", clean, err)
	}
	defer root.Close()
	first := filepath.FromSlash(clean)
	// Folders made for a sub-path: searchable where the file is readable.
	if sub := filepath.Dir(first); sub != "." {
		if err := root.MkdirAll(sub, perm|(perm&0o444)>>2); err != nil {
			return Saved{}, fmt.Errorf("save %s: %w", clean, outside(err))
		}
	}
	tmpName := filepath.Join(filepath.Dir(first), ".part-"+rand.Text())
	tmp, err := root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Saved{}, fmt.Errorf("save %s: %w", clean, outside(err))
	}
	defer root.Remove(tmpName) // the linked name stays
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
	if err := root.Chmod(tmpName, perm); err != nil {
		return Saved{}, fmt.Errorf("save %s: %w", clean, err)
	}
	for i := 1; i <= maxNumbered; i++ {
		cand := filename.Numbered(clean, i)
		err := root.Link(tmpName, filepath.FromSlash(cand))
		if err == nil {
			return Saved{Path: filepath.Join(dir, filepath.FromSlash(cand)), Name: cand, Size: n}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return Saved{}, fmt.Errorf("save %s as %s: %w", clean, filepath.Join(dir, filepath.FromSlash(cand)), outside(err))
		}
	}
	return Saved{}, fmt.Errorf("save %s: no free name beside %s", clean, filepath.Join(dir, first))
}

// outside says so when err is an os.Root's refusal of a path that leads
// out of its folder (through a symbolic link).
func outside(err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%w: a symbolic link there leads out of the folder, and files are saved only inside it", err)
	}
	return err
}
