package fileserve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var bg = context.Background()

func TestPutOpenStat(t *testing.T) {
	st := newTestStore(t)
	content := []byte("hello, world\n")
	before := time.Now()
	m, err := st.Put(bg, NewFile{Area: Outputs, Owner: "alice@example.com", Name: "../notes/hello.txt"}, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	if !ValidID(m.ID) || m.Area != Outputs || m.Owner != "alice@example.com" || m.Name != "notes/hello.txt" ||
		m.Size != int64(len(content)) || m.SHA256 != hex.EncodeToString(sum[:]) || m.MIMEType != "text/plain; charset=utf-8" {
		t.Errorf("meta = %+v", m)
	}
	if m.Created.Before(before.Add(-time.Second)) || m.Created.After(time.Now()) {
		t.Errorf("Created = %v, want about now", m.Created)
	}
	// Layout: <root>/<area>/<ownerkey>/<id>/{data,meta.json}; the owner string never appears.
	dir := filepath.Join(st.Root(), "outputs", OwnerKey("alice@example.com"), m.ID)
	if got, err := os.ReadFile(filepath.Join(dir, "data")); err != nil || !bytes.Equal(got, content) {
		t.Errorf("data file: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); err != nil {
		t.Error(err)
	}
	if len(OwnerKey("x")) != 32 {
		t.Errorf("owner key %q is not 32 hex digits", OwnerKey("x"))
	}

	got, err := st.Stat(bg, Outputs, "alice@example.com", m.ID)
	if err != nil || !got.Created.Equal(m.Created) {
		t.Fatalf("Stat = %+v, %v", got, err)
	}
	got.Created = m.Created
	if got != m {
		t.Errorf("Stat = %+v, want %+v", got, m)
	}

	obj, om, err := st.Open(bg, Outputs, "alice@example.com", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if _, ok := obj.(*os.File); !ok {
		t.Errorf("Open returned %T, want *os.File (for sendfile)", obj)
	}
	if om.ID != m.ID || om.Size != m.Size {
		t.Errorf("Open meta = %+v", om)
	}
	if b, _ := io.ReadAll(obj); !bytes.Equal(b, content) {
		t.Errorf("content = %q", b)
	}
	assertTmpEmpty(t, st)
}

func TestPutMIME(t *testing.T) {
	st := newTestStore(t)
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)
	for _, tc := range []struct {
		name, given string
		content     []byte
		want        string
	}{
		{"picture.bin", "", png, "image/png"},
		{"notes.md", "", []byte("# Title\n\ntext\n"), "text/markdown; charset=utf-8"},
		{"empty.pdf", "", nil, "application/pdf"},
		{"x.dat", "application/x-custom", []byte("whatever"), "application/x-custom"},
	} {
		m, err := st.Put(bg, NewFile{Area: Outputs, Owner: "o", Name: tc.name, MIMEType: tc.given}, bytes.NewReader(tc.content))
		if err != nil {
			t.Fatal(err)
		}
		if m.MIMEType != tc.want {
			t.Errorf("%s: MIME %q, want %q", tc.name, m.MIMEType, tc.want)
		}
	}
}

func TestPutCap(t *testing.T) {
	st := newTestStore(t)
	if _, err := st.Put(bg, NewFile{Area: Staging, Owner: "o", Name: "a", MaxBytes: 10}, bytes.NewReader(pattern(10))); err != nil {
		t.Fatalf("exactly the cap: %v", err)
	}
	st = newTestStore(t)
	// A reader far over the cap, delivered in small reads so the overrun
	// happens mid-stream.
	_, err := st.Put(bg, NewFile{Area: Staging, Owner: "o", Name: "a", MaxBytes: 1000}, io.LimitReader(slowZeros{}, 1<<20))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the cap: err = %v, want ErrTooLarge", err)
	}
	assertEmpty(t, st)
}

func TestPutReaderFails(t *testing.T) {
	st := newTestStore(t)
	boom := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(pattern(100_000)), errReader{boom})
	_, err := st.Put(bg, NewFile{Area: Outputs, Owner: "o", Name: "half.bin"}, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the reader's error", err)
	}
	if _, ok := errors.AsType[*readError](err); !ok {
		t.Errorf("err %v is not marked as a read error", err)
	}
	assertEmpty(t, st)
}

func TestPutCanceled(t *testing.T) {
	st := newTestStore(t)
	ctx, cancel := context.WithCancel(bg)
	r := &cancelAfter{r: bytes.NewReader(pattern(1 << 20)), after: 1000, cancel: cancel}
	_, err := st.Put(ctx, NewFile{Area: Outputs, Owner: "o", Name: "x"}, r)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertEmpty(t, st)
}

func TestPutInvalid(t *testing.T) {
	st := newTestStore(t)
	for _, f := range []NewFile{
		{Area: "", Owner: "o", Name: "x"},
		{Area: "../outputs", Owner: "o", Name: "x"},
		{Area: Outputs, Owner: "", Name: "x"},
	} {
		if _, err := st.Put(bg, f, strings.NewReader("x")); err == nil {
			t.Errorf("Put(%+v) succeeded", f)
		}
	}
	assertEmpty(t, st)
}

func TestOwnerIsolation(t *testing.T) {
	st := newTestStore(t)
	m, err := st.Put(bg, NewFile{Area: Outputs, Owner: "alice", Name: "secret.txt"}, strings.NewReader("alice's"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Open(bg, Outputs, "bob", m.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open as bob: %v, want ErrNotFound", err)
	}
	if _, err := st.Stat(bg, Outputs, "bob", m.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Stat as bob: %v, want ErrNotFound", err)
	}
	if _, _, err := st.Open(bg, Staging, "alice", m.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open in staging: %v, want ErrNotFound", err)
	}
	if err := st.Delete(bg, Outputs, "bob", m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(bg, Outputs, "alice", m.ID); err != nil {
		t.Errorf("bob's Delete removed alice's file: %v", err)
	}
}

func TestInvalidNamesNotFound(t *testing.T) {
	st := newTestStore(t)
	m, err := st.Put(bg, NewFile{Area: Outputs, Owner: "o", Name: "x"}, strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		area Area
		id   string
	}{
		{Outputs, ""},
		{Outputs, ".."},
		{Outputs, "../../etc/passwd"},
		{Outputs, strings.ToUpper(m.ID)},
		{Outputs, m.ID[:31]},
		{Outputs, m.ID + "0"},
		{Outputs, m.ID[:31] + "/"},
		{Outputs, m.ID[:31] + "\x00"},
		{Outputs, m.ID[:31] + "g"},
		{"../outputs", m.ID},
		{"tmp", m.ID},
		{"", m.ID},
	} {
		if _, err := st.Stat(bg, tc.area, "o", tc.id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Stat(%q, %q): %v, want ErrNotFound", tc.area, tc.id, err)
		}
		if _, _, err := st.Open(bg, tc.area, "o", tc.id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q, %q): %v, want ErrNotFound", tc.area, tc.id, err)
		}
		if err := st.Delete(bg, tc.area, "o", tc.id); err != nil {
			t.Errorf("Delete(%q, %q): %v", tc.area, tc.id, err)
		}
	}
	if _, _, err := st.Open(bg, Outputs, "", m.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open with empty owner: %v", err)
	}
	if _, err := st.Stat(bg, Outputs, "o", m.ID); err != nil {
		t.Errorf("the file is gone: %v", err)
	}
}

func TestDeleteWhileReading(t *testing.T) {
	st := newTestStore(t)
	content := pattern(3 << 20)
	m, err := st.Put(bg, NewFile{Area: Outputs, Owner: "o", Name: "big.bin"}, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := st.Open(bg, Outputs, "o", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	first := make([]byte, 1<<20)
	if _, err := io.ReadFull(obj, first); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(bg, Outputs, "o", m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(bg, Outputs, "o", m.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Stat after Delete: %v", err)
	}
	if _, _, err := st.Open(bg, Outputs, "o", m.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open after Delete: %v", err)
	}
	rest, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(first, rest...), content) {
		t.Error("the open file did not read to its end after Delete")
	}
	if err := st.Delete(bg, Outputs, "o", m.ID); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	assertEmpty(t, st)
}

func TestAdopt(t *testing.T) {
	st := newTestStore(t)
	src := filepath.Join(t.TempDir(), "report.pdf")
	content := append([]byte("%PDF-1.7\n"), pattern(5000)...)
	if err := os.WriteFile(src, content, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := st.Adopt(bg, NewFile{Area: Outputs, Owner: "o"}, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(src); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the adopted file is still at its path: %v", err)
	}
	sum := sha256.Sum256(content)
	if m.Name != "report.pdf" || m.Size != int64(len(content)) || m.MIMEType != "application/pdf" || m.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("meta = %+v", m)
	}
	assertContent(t, st, m, content)
	assertTmpEmpty(t, st)
}

func TestAdoptAcrossFileSystems(t *testing.T) {
	st := newTestStore(t)
	st.adoptRename = func(oldpath, newpath string) error {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: syscall.EXDEV}
	}
	src := filepath.Join(t.TempDir(), "page.png")
	content := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), pattern(70000)...)
	if err := os.WriteFile(src, content, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := st.Adopt(bg, NewFile{Area: Outputs, Owner: "o", Name: "images/page.png"}, src)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "images/page.png" || m.MIMEType != "image/png" || m.Size != int64(len(content)) {
		t.Errorf("meta = %+v", m)
	}
	if _, err := os.Lstat(src); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the copied file is still at its path: %v", err)
	}
	assertContent(t, st, m, content)
	assertTmpEmpty(t, st)
}

func TestAdoptFailureKeepsFile(t *testing.T) {
	for _, crossFS := range []bool{false, true} {
		st := newTestStore(t)
		if crossFS {
			st.adoptRename = func(o, n string) error { return &os.LinkError{Op: "rename", Old: o, New: n, Err: syscall.EXDEV} }
		}
		dir := t.TempDir()
		src := filepath.Join(dir, "big.bin")
		if err := os.WriteFile(src, pattern(5000), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Adopt(bg, NewFile{Area: Outputs, Owner: "o", MaxBytes: 100}, src); !errors.Is(err, ErrTooLarge) {
			t.Errorf("over the cap: %v, want ErrTooLarge", err)
		}
		// Canceled after the rename: the file must come back.
		ctx, cancel := context.WithCancel(bg)
		st.adoptRename = func(o, n string) error {
			cancel()
			if crossFS {
				return &os.LinkError{Op: "rename", Old: o, New: n, Err: syscall.EXDEV}
			}
			return os.Rename(o, n)
		}
		if _, err := st.Adopt(ctx, NewFile{Area: Outputs, Owner: "o"}, src); !errors.Is(err, context.Canceled) {
			t.Errorf("canceled: %v", err)
		}
		if b, err := os.ReadFile(src); err != nil || !bytes.Equal(b, pattern(5000)) {
			t.Errorf("crossFS=%v: the file was not left at its path: %v", crossFS, err)
		}
		link := filepath.Join(dir, "link")
		if err := os.Symlink("/etc/passwd", link); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Adopt(bg, NewFile{Area: Outputs, Owner: "o"}, link); err == nil {
			t.Error("a symbolic link was adopted")
		}
		if _, err := st.Adopt(bg, NewFile{Area: Outputs, Owner: "o"}, dir); err == nil {
			t.Error("a folder was adopted")
		}
		if _, err := st.Adopt(bg, NewFile{Area: Outputs, Owner: "o"}, filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("missing file: %v", err)
		}
		assertEmpty(t, st)
	}
}

func TestWalk(t *testing.T) {
	st := newTestStore(t)
	want := map[string]bool{}
	for i, owner := range []string{"a", "a", "b"} {
		m, err := st.Put(bg, NewFile{Area: Outputs, Owner: owner, Name: "f"}, strings.NewReader(strings.Repeat("x", i)))
		if err != nil {
			t.Fatal(err)
		}
		want[m.ID] = true
	}
	if _, err := st.Put(bg, NewFile{Area: Staging, Owner: "a", Name: "s"}, strings.NewReader("s")); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	if err := st.Walk(bg, Outputs, func(m Meta) error {
		if m.Area != Outputs {
			t.Errorf("walked %+v", m)
		}
		got[m.ID] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Errorf("walked %d files, want 3", len(got))
	}
	for id := range want {
		if !got[id] {
			t.Errorf("Walk missed %s", id)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := st.Walk(bg, Outputs, func(Meta) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Walk returned %v after %d calls, want stop after 1", err, n)
	}
	if err := st.Walk(bg, "tmp", func(Meta) error { return nil }); err == nil {
		t.Error("Walk of an unknown area succeeded")
	}
}

func TestPrune(t *testing.T) {
	st := newTestStore(t)
	keep, err := st.Put(bg, NewFile{Area: Outputs, Owner: "keep", Name: "k"}, strings.NewReader("k"))
	if err != nil {
		t.Fatal(err)
	}
	gone, err := st.Put(bg, NewFile{Area: Outputs, Owner: "gone", Name: "g"}, strings.NewReader("g"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(bg, Outputs, "gone", gone.ID); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	tmp := filepath.Join(st.Root(), tmpDir)
	// Remains of a crashed write: old; a write in progress: young.
	crashed := filepath.Join(tmp, "add-crashed")
	os.Mkdir(crashed, 0o700)
	os.WriteFile(filepath.Join(crashed, "data"), []byte("partial"), 0o600)
	os.Chtimes(filepath.Join(crashed, "data"), old, old)
	os.Chtimes(crashed, old, old)
	young := filepath.Join(tmp, "add-young")
	os.Mkdir(young, 0o700)
	// A file folder whose metadata was lost.
	broken := filepath.Join(st.Root(), "outputs", OwnerKey("broken"), NewID())
	os.MkdirAll(broken, 0o700)
	os.Chtimes(broken, old, old)

	goneOwner := filepath.Join(st.Root(), "outputs", OwnerKey("gone"))
	if err := st.Prune(bg, Outputs, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{crashed, broken} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived Prune", p)
		}
	}
	for _, p := range []string{young, goneOwner} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was pruned although young: %v", p, err)
		}
	}
	// Once old enough, empty owner folders go too.
	if err := st.Prune(bg, Outputs, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{goneOwner, filepath.Dir(broken), young} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived Prune", p)
		}
	}
	if _, err := st.Stat(bg, Outputs, "keep", keep.ID); err != nil {
		t.Errorf("a stored file was pruned: %v", err)
	}
}

func TestPutRacesPrune(t *testing.T) {
	st := newTestStore(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				st.Prune(bg, Outputs, time.Now().Add(time.Hour))
			}
		}
	})
	for i := range 200 {
		m, err := st.Put(bg, NewFile{Area: Outputs, Owner: "racer", Name: "r"}, strings.NewReader("r"))
		if err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
		if err := st.Delete(bg, Outputs, "racer", m.ID); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestReady(t *testing.T) {
	st := newTestStore(t)
	if err := st.Ready(bg); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(st.Root(), tmpDir)
	os.RemoveAll(tmp)
	os.WriteFile(tmp, nil, 0o600) // tmp is now a file: nothing can be created in it
	if err := st.Ready(bg); err == nil {
		t.Error("Ready succeeded on a broken store")
	}
}

func TestNewDiskStore(t *testing.T) {
	if _, err := NewDiskStore(""); err == nil {
		t.Error("empty root accepted")
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := NewDiskStore(file); err == nil {
		t.Error("a file as root accepted")
	}
	st := newTestStore(t)
	if !filepath.IsAbs(st.Root()) {
		t.Errorf("Root() = %q, want absolute", st.Root())
	}
	for _, d := range []string{"outputs", "staging", "tmp"} {
		if fi, err := os.Stat(filepath.Join(st.Root(), d)); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", d, err)
		}
	}
}

func assertContent(t *testing.T, st *DiskStore, m Meta, want []byte) {
	t.Helper()
	obj, _, err := st.Open(bg, m.Area, m.Owner, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if b, _ := io.ReadAll(obj); !bytes.Equal(b, want) {
		t.Errorf("stored content differs (%d bytes, want %d)", len(b), len(want))
	}
}

func assertTmpEmpty(t *testing.T, st *DiskStore) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(st.Root(), tmpDir))
	for _, e := range entries {
		t.Errorf("tmp/ holds %s", e.Name())
	}
}

// slowZeros yields zeros 100 bytes at a time.
type slowZeros struct{}

func (slowZeros) Read(p []byte) (int, error) {
	n := min(len(p), 100)
	clear(p[:n])
	return n, nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// cancelAfter cancels its context once after bytes have been read.
type cancelAfter struct {
	r      io.Reader
	after  int
	n      int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p[:min(len(p), 500)])
	c.n += n
	if c.n >= c.after {
		c.cancel()
	}
	return n, err
}
