package fileserve

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// putSmall stores content for owner and returns its metadata.
func putSmall(t *testing.T, d *DiskStore, owner string, content []byte) Meta {
	t.Helper()
	m, err := d.Put(context.Background(), NewFile{Area: Outputs, Owner: owner, Name: "s.bin"}, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestReadSmall(t *testing.T) {
	ctx := context.Background()
	d, err := NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1024)
	content := []byte("small content")
	m := putSmall(t, d, "alice", content)

	for try := range 3 { // the first opens the file, the others read the cached one
		got, b, ok, err := d.ReadSmall(ctx, Outputs, "alice", m.ID, buf)
		if err != nil || !ok || !bytes.Equal(b, content) || got.ID != m.ID || got.SHA256 != m.SHA256 {
			t.Fatalf("try %d: %+v %q %v %v", try, got, b, ok, err)
		}
	}
	if d.open.len() != 1 {
		t.Errorf("%d files open, want 1", d.open.len())
	}
	// Another owner's file, another area, an invalid id: not found.
	for _, c := range []struct {
		area      Area
		owner, id string
	}{{Outputs, "mallory", m.ID}, {Staging, "alice", m.ID}, {Outputs, "alice", "../" + m.ID}} {
		if _, _, _, err := d.ReadSmall(ctx, c.area, c.owner, c.id, buf); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s/%s/%s: %v, want ErrNotFound", c.area, c.owner, c.id, err)
		}
	}

	// Too big for the buffer: its metadata, nothing read, nothing cached.
	big := putSmall(t, d, "alice", bytes.Repeat([]byte("b"), 2000))
	for range 2 { // once opened, once answered from the metadata cache
		got, b, ok, err := d.ReadSmall(ctx, Outputs, "alice", big.ID, buf)
		if err != nil || ok || b != nil || got.Size != 2000 {
			t.Errorf("a file larger than the buffer: %+v, %d bytes, ok %v, %v", got, len(b), ok, err)
		}
	}
	if d.open.len() != 1 {
		t.Errorf("%d files open after a big file, want 1", d.open.len())
	}

	// Deleted by this process: gone at once, and the cached file closed.
	if err := d.Delete(ctx, Outputs, "alice", m.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := d.ReadSmall(ctx, Outputs, "alice", m.ID, buf); !errors.Is(err, ErrNotFound) {
		t.Errorf("after Delete: %v, want ErrNotFound", err)
	}
	if d.open.len() != 0 {
		t.Errorf("%d files open after Delete, want 0", d.open.len())
	}

	// Deleted by another process (the cache is not told): the link count says so.
	other := putSmall(t, d, "alice", content)
	if _, _, ok, err := d.ReadSmall(ctx, Outputs, "alice", other.ID, buf); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := os.RemoveAll(filepath.Join(d.root, string(Outputs), OwnerKey("alice"), other.ID)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := d.ReadSmall(ctx, Outputs, "alice", other.ID, buf); !errors.Is(err, ErrNotFound) {
		t.Errorf("after another process removed it: %v, want ErrNotFound", err)
	}
}

// The cache keeps at most openFilesMax files open, closing the least
// recently used.
func TestReadSmallBounded(t *testing.T) {
	ctx := context.Background()
	d, err := NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fds := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd:", err)
		}
		return len(es)
	}
	before := fds()
	buf := make([]byte, 64)
	ids := make([]string, openFilesMax+50)
	for i := range ids {
		ids[i] = putSmall(t, d, "alice", []byte(strings.Repeat("x", i%60))).ID
		if _, _, ok, err := d.ReadSmall(ctx, Outputs, "alice", ids[i], buf); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if n := d.open.len(); n != openFilesMax {
		t.Errorf("%d files cached, want %d", n, openFilesMax)
	}
	if extra := fds() - before; extra > openFilesMax+5 {
		t.Errorf("%d more descriptors open than before, want at most %d", extra, openFilesMax)
	}
	if d.open.acquire(ids[0]) != nil {
		t.Error("the least recently used file is still cached")
	}
}

// Readers and deleters side by side (run with -race): every read is the
// whole content or not found, and nothing stays open once all is deleted.
func TestReadSmallConcurrent(t *testing.T) {
	ctx := context.Background()
	d, err := NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat([]byte("0123456789"), 50)
	var ids []string
	for range 20 {
		ids = append(ids, putSmall(t, d, "alice", content).ID)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			buf := make([]byte, 4096)
			for i := range 400 {
				id := ids[(g+i)%len(ids)]
				_, b, ok, err := d.ReadSmall(ctx, Outputs, "alice", id, buf)
				switch {
				case errors.Is(err, ErrNotFound):
				case err != nil || !ok || !bytes.Equal(b, content):
					t.Errorf("read %s: %d bytes, ok %v, %v", id, len(b), ok, err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for _, id := range ids {
			if err := d.Delete(ctx, Outputs, "alice", id); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	buf := make([]byte, 4096)
	for _, id := range ids {
		if _, _, _, err := d.ReadSmall(ctx, Outputs, "alice", id, buf); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s after Delete: %v", id, err)
		}
	}
	if n := d.open.len(); n != 0 {
		t.Errorf("%d files still cached after every one was deleted", n)
	}
}

// len is how many files the cache holds open.
func (o *openFiles) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.byID)
}
