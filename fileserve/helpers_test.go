package fileserve

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func newTestStore(t testing.TB) *DiskStore {
	t.Helper()
	st, err := NewDiskStore(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// assertEmpty fails if the store holds any file or temporary entry.
func assertEmpty(t testing.TB, st *DiskStore) {
	t.Helper()
	for _, area := range []Area{Outputs, Staging} {
		st.Walk(context.Background(), area, func(m Meta) error {
			t.Errorf("store holds %s file %s (%s)", area, m.ID, m.Name)
			return nil
		})
	}
	entries, err := os.ReadDir(filepath.Join(st.Root(), tmpDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("tmp/ holds %s", e.Name())
	}
}

// pattern returns n bytes of a repeating, position-dependent pattern.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}
