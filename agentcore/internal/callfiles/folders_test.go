package callfiles

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCallFoldersOfProcessesStartingTogether(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "calls")
	for round := 0; round < 40; round++ {
		const n = 6
		opened := make(chan *Folders, n)
		for range n {
			go func() {
				cf, err := Open(parent, nil, nil, nil)
				if err != nil {
					t.Error(err)
				}
				opened <- cf
			}()
		}
		var all []*Folders
		for range n {
			if cf := <-opened; cf != nil {
				all = append(all, cf)
			}
		}
		for _, cf := range all {
			if _, err := os.Stat(cf.dir); err != nil {
				t.Fatalf("round %d: a live process's call folder is gone: %v", round, err)
			}
			if _, err := os.Stat(cf.lock.Name()); err != nil {
				t.Fatalf("round %d: a live process's lock file is gone: %v", round, err)
			}
		}
		for _, cf := range all {
			cf.Close()
		}
	}
}
