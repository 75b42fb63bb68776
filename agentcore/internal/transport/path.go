//go:build unix

package transport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/fileserve"
)

// Path is the transport of paths under an input root (AGENT_INPUT_ROOTS):
// opened without leaving the root (no "..", no symbolic link out), never
// one of the agent's own files. With no roots every path is refused.
type Path struct {
	roots   []string // absolute, symlink-free
	private *privateFiles
}

// NewPath takes paths under roots (absolute, symlink-free) of an agent
// whose data folder is dataDir and whose key file is keyFile.
func NewPath(roots []string, dataDir, keyFile string) *Path {
	return &Path{roots: roots, private: newPrivateFiles(dataDir, keyFile)}
}

// Schemes: none; a path is told from base64 by its shape.
func (*Path) Schemes() []string { return nil }

// Describe names the form.
func (*Path) Describe() Description { return Description{Content: "path under an input root"} }

// Resolves reports whether content reads as a path (looksLikePath).
func (*Path) Resolves(content string) bool { return looksLikePath(content) }

// Offer hands nothing out.
func (*Path) Offer(fileserve.Meta, *Offer) error { return nil }

// Open opens p under its input root.
func (t *Path) Open(_ context.Context, _, p string) (*Source, error) {
	if len(t.roots) == 0 {
		return nil, fmt.Errorf("%w on this agent (AGENT_INPUT_ROOTS is empty), so %q cannot be read; send the file as a data URI, base64 or URL instead", ErrPathInputsDisabled, calls.Truncate(p, 120))
	}
	p = strings.ReplaceAll(p, `\`, "/")
	var f *os.File
	var err error
	if filepath.IsAbs(p) {
		root, rel, ok := t.splitRoot(p)
		if !ok {
			return nil, fmt.Errorf("%w: %q is not inside %s (AGENT_INPUT_ROOTS)", ErrOutsideRoots, p, strings.Join(t.roots, ":"))
		}
		f, err = openInRoot(root, rel)
	} else {
		if !filepath.IsLocal(p) {
			return nil, fmt.Errorf("%w: %q climbs out of the input roots", ErrOutsideRoots, p)
		}
		for _, root := range t.roots {
			if f, err = openInRoot(root, p); err == nil || !errors.Is(err, os.ErrNotExist) {
				break
			}
		}
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no file at %q under the input roots", p)
		}
		if strings.Contains(err.Error(), "escapes") {
			return nil, fmt.Errorf("%w: %q leads outside its input root (through a symbolic link or ..)", ErrOutsideRoots, p)
		}
		return nil, fmt.Errorf("open %q: %w", p, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%q is not a regular file", p)
	}
	if err == nil {
		err = t.private.check(p, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Source{ReadCloser: f, Name: filepath.Base(p), Size: st.Size(), Where: fmt.Sprintf("%q", p)}, nil
}

func (t *Path) splitRoot(p string) (root, rel string, ok bool) {
	clean := filepath.Clean(p)
	for _, root := range t.roots {
		if rel, err := filepath.Rel(root, clean); err == nil && rel != "." && filepath.IsLocal(rel) {
			return root, rel, true
		}
	}
	return "", "", false
}

// openInRoot opens name for reading without leaving root (os.Root: no "..",
// no symbolic link out). O_NONBLOCK keeps a FIFO from blocking the call
// forever; it changes nothing for the regular files that are accepted.
func openInRoot(root, name string) (*os.File, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// looksLikePath reports whether s reads as a file path rather than base64:
// it has a folder separator and a character base64 never uses ('.', '\',
// '~'), or it is a short absolute path without '+' or '='. Plain base64 that
// happens to look like a path can always be sent unambiguously as a data URI.
func looksLikePath(s string) bool {
	if len(s) > 4096 || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	if !strings.ContainsAny(s, `/\`) {
		return false
	}
	if !isBase64Text(s) {
		return true
	}
	return strings.HasPrefix(s, "/") && len(s) <= 1024 && !strings.ContainsAny(s, "+=") && !strings.Contains(s, "//")
}
