//go:build unix

package fileserve

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// RemoveTemp removes the tagged temporary folders of processes that are
// gone, and keeps those of live ones, untagged ones and writes in progress
// in this process.
func TestRemoveTemp(t *testing.T) {
	d, err := NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dead, live := NewID(), NewID()
	tmp := filepath.Join(d.Root(), tmpDir)
	for _, name := range []string{"add-" + dead + "." + NewID(), "del-" + dead + "." + NewID(), "add-" + live + "." + NewID(), "add-" + NewID()} {
		if err := os.MkdirAll(filepath.Join(tmp, name, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A write in progress of this process, tagged with the dead id.
	d.TagTemp(dead)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := d.Put(context.Background(), NewFile{Area: Outputs, Owner: "o", Name: "w.bin"}, pr)
		done <- err
	}()
	pw.Write([]byte("started"))
	n, err := d.RemoveTemp(func(tag string) bool { return tag == dead })
	if err != nil || n != 2 {
		t.Errorf("RemoveTemp = %d, %v; want the 2 folders of the dead process", n, err)
	}
	entries, _ := os.ReadDir(tmp)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) != 3 || !slices.ContainsFunc(left, func(s string) bool { return strings.HasPrefix(s, "add-"+live) }) {
		t.Errorf("tmp/ holds %v; want the live one's, the untagged one and the write in progress", left)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Errorf("the write in progress failed: %v", err)
	}
}

// A record is written through a temporary file tagged like the store's
// other temporary entries, so that the one a process left when it stopped
// mid-write (an agent killed at its shutdown timeout) is removed by
// RemoveTemp once that process is gone, not only after the shortest TTL.
func TestRecordTempIsRemovedWhenItsProcessIsGone(t *testing.T) {
	d, err := NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dead := NewID()
	d.TagTemp(dead)
	var tmpName string
	err = d.writeRecord("tasks", "o", "r1", []byte("{}"), func(tmp, p string) error {
		tmpName = filepath.Base(tmp)
		// The process stops here: the temporary file stays, as a copy.
		b, err := os.ReadFile(tmp)
		if err != nil {
			return err
		}
		if err := os.WriteFile(tmp+".left", b, 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tmpName, "rec-"+dead+".") {
		t.Fatalf("the record's temporary file is %s, want it tagged rec-%s.<id>", tmpName, dead)
	}
	d.TagTemp(NewID()) // a new process on the same folder
	if n, err := d.RemoveTemp(func(tag string) bool { return tag == dead }); err != nil || n != 1 {
		t.Errorf("RemoveTemp = %d, %v; want the record's leftover of the gone process removed", n, err)
	}
}
