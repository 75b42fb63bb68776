package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// roots are the folders a file may be named under. Each is opened as an
// os.Root, so a name cannot leave its folder, through ".." or a symlink.
type roots struct {
	list []rootDir
}

type rootDir struct {
	path string   // absolute
	real string   // with symlinks resolved, to match absolute names given that way
	root *os.Root // opened once
}

// openRoots opens dirs (the current directory if none).
func openRoots(dirs []string) (*roots, error) {
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	r := &roots{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("gateway: root %s: %w", d, err)
		}
		root, err := os.OpenRoot(abs)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("gateway: root %s: %w: give a folder that exists with --root", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = abs
		}
		r.list = append(r.list, rootDir{path: abs, real: real, root: root})
	}
	return r, nil
}

func (r *roots) close() {
	for _, d := range r.list {
		d.root.Close()
	}
}

// String lists the roots for messages: "/home/me, /data".
func (r *roots) String() string {
	var s []string
	for _, d := range r.list {
		s = append(s, d.path)
	}
	return strings.Join(s, ", ")
}

// errOutside is wrapped by the error of a path that is not under a root.
var errOutside = errors.New("not under a root")

// open opens the regular file name: a path relative to a root (the first
// root that holds it) or an absolute path under one. It returns fs.ErrNotExist
// (wrapped) when no root holds it and errOutside for an absolute path, or a
// symlink, that leads out of every root.
func (r *roots) open(name string) (*os.File, error) {
	f, _, err := r.openPath(name)
	return f, err
}

// openPath is open that also returns the file's path: its root joined with
// the name under it.
func (r *roots) openPath(name string) (*os.File, string, error) {
	type try struct {
		d   rootDir
		rel string
	}
	var tries []try
	if filepath.IsAbs(name) {
		clean := filepath.Clean(name)
		for _, d := range r.list {
			for _, base := range []string{d.path, d.real} {
				rel, err := filepath.Rel(base, clean)
				if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
					tries = append(tries, try{d, rel})
				}
			}
		}
		if len(tries) == 0 {
			return nil, "", fmt.Errorf("%s: %w (%s): the gateway reads only files under its roots; start it with --root for that folder", name, errOutside, r)
		}
	} else {
		for _, d := range r.list {
			tries = append(tries, try{d, name})
		}
	}
	var firstErr error
	for _, t := range tries {
		// Opened without waiting, then checked on the open file (no
		// race with a rename): a named pipe, a device or a socket is
		// refused, where a plain open of a pipe hung for a writer.
		f, err := t.d.root.OpenFile(t.rel, os.O_RDONLY|openNonblock, 0)
		if err == nil {
			st, err := f.Stat()
			if err == nil && st.Mode().IsRegular() {
				return f, filepath.Join(t.d.path, t.rel), nil
			}
			f.Close()
			if err == nil {
				err = fmt.Errorf("%s is %s, not a regular file: the gateway sends only regular files", name, fileKind(st.Mode()))
			}
			return nil, "", err
		}
		if !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		// os.Root refuses names that escape it (.., symlinks out).
		return nil, "", fmt.Errorf("%s: %w (%s): %v", name, errOutside, r, firstErr)
	}
	return nil, "", fmt.Errorf("%s: %w under %s", name, fs.ErrNotExist, r)
}

// fileKind names what a file that is not a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
