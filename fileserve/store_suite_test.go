package fileserve_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/storetest"
)

// TestDiskStoreSuite runs the Store conformance suite on local disk.
func TestDiskStoreSuite(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) fileserve.Store {
			st, err := fileserve.NewDiskStore(filepath.Join(t.TempDir(), "store"))
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Another: func(t *testing.T, st fileserve.Store) fileserve.Store {
			other, err := fileserve.NewDiskStore(st.(*fileserve.DiskStore).Root())
			if err != nil {
				t.Fatal(err)
			}
			return other
		},
		Abandon: func(t *testing.T, st fileserve.Store, area fileserve.Area) {
			root := st.(*fileserve.DiskStore).Root()
			for _, dir := range []string{
				filepath.Join(root, string(area), fileserve.OwnerKey("o"), fileserve.NewID()), // content, no metadata
				filepath.Join(root, "tmp", "add-"+fileserve.NewID()),                          // a write cut short
			} {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "data"), []byte("half"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		},
		Remains: func(t *testing.T, st fileserve.Store) int {
			root := st.(*fileserve.DiskStore).Root()
			tmp, err := os.ReadDir(filepath.Join(root, "tmp"))
			if err != nil {
				t.Fatal(err)
			}
			n := len(tmp)
			for _, area := range []string{"outputs", "staging"} {
				dirs, _ := filepath.Glob(filepath.Join(root, area, "*", "*"))
				for _, d := range dirs {
					if _, err := os.Stat(filepath.Join(d, "meta.json")); err != nil {
						n++
					}
				}
			}
			return n
		},
	})
}
