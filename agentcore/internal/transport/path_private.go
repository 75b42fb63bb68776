package transport

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// privateFiles recognises the agent's own files among path inputs: a hard
// link placed in an input root shares the inode of the file it names, and
// os.Root (which stops symbolic links and "..") cannot see that.
type privateFiles struct {
	keys    []fileID // the signing key files
	dataDev uint64   // the device of the data and storage folders
	hasDev  bool
}

type fileID struct{ dev, ino uint64 }

// newPrivateFiles recognises the key files and the data folder's device of
// an agent whose data folder is dataDir and whose key file is keyFile ("":
// none besides the generated one).
func newPrivateFiles(dataDir, keyFile string) *privateFiles {
	p := &privateFiles{}
	for _, k := range []string{filepath.Join(dataDir, "signing.key"), keyFile} {
		if k == "" {
			continue
		}
		if st, err := os.Stat(k); err == nil {
			if id, ok := idOf(st); ok {
				p.keys = append(p.keys, id)
			}
		}
	}
	if st, err := os.Stat(dataDir); err == nil {
		if id, ok := idOf(st); ok {
			p.dataDev, p.hasDev = id.dev, true
		}
	}
	return p
}

func idOf(st os.FileInfo) (fileID, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(sys.Dev), ino: uint64(sys.Ino)}, true
}

// check refuses the opened path input p (its FileInfo st) when it is one
// of the agent's key files, or a hard link on the file system of the
// agent's data (it may name any owner's stored file).
func (p *privateFiles) check(name string, st os.FileInfo) error {
	if p == nil {
		return nil
	}
	id, ok := idOf(st)
	if !ok {
		return nil
	}
	for _, k := range p.keys {
		if id == k {
			return fmt.Errorf("%w: %q is the agent's signing key (a hard link to it); keys are never read as inputs", ErrOutsideRoots, name)
		}
	}
	if sys := st.Sys().(*syscall.Stat_t); sys.Nlink > 1 && p.hasDev && id.dev == p.dataDev {
		return fmt.Errorf("%w: %q is a hard link on the file system of the agent's own data, which could name another caller's file; put a copy of the file under the input root instead", ErrOutsideRoots, name)
	}
	return nil
}
