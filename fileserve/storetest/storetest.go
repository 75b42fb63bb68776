// Package storetest is the conformance suite of fileserve.Store: the
// behaviour every store must show, run against each implementation (local
// disk, S3) by that implementation's tests.
//
// A store's test calls Run with a Harness that makes fresh stores and knows
// how to leave and count the remains of interrupted writes in that store.
package storetest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
)

// Harness adapts the suite to one Store implementation.
type Harness struct {
	// New returns an empty store, removed when the test ends.
	New func(t *testing.T) fileserve.Store
	// Another returns a second store on the same backing as st (another
	// replica, another process), as New made it.
	Another func(t *testing.T, st fileserve.Store) fileserve.Store
	// Abandon leaves in st, in area, what a write interrupted by a crash
	// leaves behind (content without metadata, unfinished uploads,
	// temporary files), dated as now.
	Abandon func(t *testing.T, st fileserve.Store, area fileserve.Area)
	// Remains counts what st holds besides complete files: what Abandon
	// leaves, and what a failed Put might have left.
	Remains func(t *testing.T, st fileserve.Store) int
	// Large is the size of the file used to cross the store's buffering
	// (multipart parts); 0 means 12 MiB.
	Large int
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, h Harness) {
	h.Large = cmp.Or(h.Large, 12<<20)
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"PutOpenStat", testPutOpenStat},
		{"Large", testLarge},
		{"Cap", testCap},
		{"ReaderFails", testReaderFails},
		{"Canceled", testCanceled},
		{"Invalid", testInvalid},
		{"Adopt", testAdopt},
		{"AdoptRefused", testAdoptRefused},
		{"OwnerIsolation", testOwnerIsolation},
		{"Seek", testSeek},
		{"Delete", testDelete},
		{"DeleteWhileReading", testDeleteWhileReading},
		{"Walk", testWalk},
		{"Prune", testPrune},
		{"Concurrent", testConcurrent},
		{"SharedBacking", testSharedBacking},
		{"Ready", testReady},
		{"ExpiryIndex", testExpiryIndex},
		{"Records", testRecords},
		{"CreateRecord", testCreateRecord},
		{"Pending", testPending},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

var bg = context.Background()

// Pattern returns n bytes of a position-dependent pattern, so that a byte
// read from the wrong offset shows.
func Pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// newWith makes a store with h and returns it also as the capability C,
// or skips the test: the store then is lacking, as Skipf says.
func newWith[C any](t *testing.T, h Harness, lacking string) (fileserve.Store, C) {
	st := h.New(t)
	c, ok := st.(C)
	if !ok {
		t.Skipf("%T %s", st, lacking)
	}
	return st, c
}

func put(t *testing.T, st fileserve.Store, area fileserve.Area, owner, name string, content []byte) fileserve.Meta {
	t.Helper()
	m, err := st.Put(bg, fileserve.NewFile{Area: area, Owner: owner, Name: name}, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readAll(t *testing.T, st fileserve.Store, area fileserve.Area, owner, id string) []byte {
	t.Helper()
	obj, _, err := st.Open(bg, area, owner, id)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// assertEmpty fails unless st holds no file and no remains.
func assertEmpty(t *testing.T, h Harness, st fileserve.Store) {
	t.Helper()
	for _, area := range []fileserve.Area{fileserve.Outputs, fileserve.Staging} {
		err := st.Walk(bg, area, func(m fileserve.Meta) error {
			t.Errorf("store holds %s file %s (%s)", area, m.ID, m.Name)
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	if n := h.Remains(t, st); n != 0 {
		t.Errorf("store holds %d remains of writes", n)
	}
}

func testPutOpenStat(t *testing.T, h Harness) {
	st := h.New(t)
	content := []byte("hello, world\n")
	before := time.Now()
	m, err := st.Put(bg, fileserve.NewFile{Area: fileserve.Outputs, Owner: "alice@example.com", Name: "../notes/hello.txt"}, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if !fileserve.ValidID(m.ID) || m.Area != fileserve.Outputs || m.Owner != "alice@example.com" || m.Name != "notes/hello.txt" ||
		m.Size != int64(len(content)) || m.SHA256 != digest(content) || m.MIMEType != "text/plain; charset=utf-8" {
		t.Errorf("meta = %+v", m)
	}
	if m.Created.Before(before.Add(-time.Second)) || m.Created.After(time.Now().Add(time.Second)) {
		t.Errorf("Created = %v, want about now", m.Created)
	}
	got, err := st.Stat(bg, fileserve.Outputs, "alice@example.com", m.ID)
	if err != nil || !got.Created.Equal(m.Created) {
		t.Fatalf("Stat = %+v, %v", got, err)
	}
	got.Created = m.Created
	if got != m {
		t.Errorf("Stat = %+v, want %+v", got, m)
	}
	obj, om, err := st.Open(bg, fileserve.Outputs, "alice@example.com", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if om.ID != m.ID || om.Size != m.Size || om.ETag() != m.ETag() {
		t.Errorf("Open meta = %+v", om)
	}
	if b, err := io.ReadAll(obj); err != nil || !bytes.Equal(b, content) {
		t.Errorf("content = %q, %v", b, err)
	}
	// An empty file is a file.
	e := put(t, st, fileserve.Staging, "o", "empty.pdf", nil)
	if e.Size != 0 || e.MIMEType != "application/pdf" || len(readAll(t, st, fileserve.Staging, "o", e.ID)) != 0 {
		t.Errorf("empty file: %+v", e)
	}
	if n := h.Remains(t, st); n != 0 {
		t.Errorf("%d remains after successful writes", n)
	}
}

func testLarge(t *testing.T, h Harness) {
	st := h.New(t)
	content := Pattern(h.Large + 12345)
	m := put(t, st, fileserve.Outputs, "o", "big.bin", content)
	if m.Size != int64(len(content)) || m.SHA256 != digest(content) {
		t.Errorf("meta = %+v", m)
	}
	if b := readAll(t, st, fileserve.Outputs, "o", m.ID); !bytes.Equal(b, content) {
		t.Errorf("read back %d bytes, differing from the %d stored", len(b), len(content))
	}
}

// slowZeros yields zeros in small reads, so an overrun happens mid-stream.
type slowZeros struct{}

func (slowZeros) Read(p []byte) (int, error) {
	n := min(len(p), 4096)
	clear(p[:n])
	return n, nil
}

func testCap(t *testing.T, h Harness) {
	st := h.New(t)
	m, err := st.Put(bg, fileserve.NewFile{Area: fileserve.Staging, Owner: "o", Name: "a", MaxBytes: 10}, bytes.NewReader(Pattern(10)))
	if err != nil || m.Size != 10 {
		t.Fatalf("exactly the cap: %+v, %v", m, err)
	}
	st.Delete(bg, m.Area, m.Owner, m.ID)
	for _, size := range []int64{1000, int64(h.Large)} {
		_, err := st.Put(bg, fileserve.NewFile{Area: fileserve.Staging, Owner: "o", Name: "a", MaxBytes: size}, io.LimitReader(slowZeros{}, 2*size+(3<<20)))
		if !errors.Is(err, fileserve.ErrTooLarge) {
			t.Fatalf("over a cap of %d: err = %v, want ErrTooLarge", size, err)
		}
	}
	assertEmpty(t, h, st)
}

// errReader fails with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func testReaderFails(t *testing.T, h Harness) {
	st := h.New(t)
	boom := errors.New("connection reset")
	for _, size := range []int{100_000, h.Large} {
		r := io.MultiReader(bytes.NewReader(Pattern(size)), errReader{boom})
		if _, err := st.Put(bg, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "half.bin"}, r); !errors.Is(err, boom) {
			t.Fatalf("after %d bytes: err = %v, want the reader's error", size, err)
		}
	}
	assertEmpty(t, h, st)
}

// cancelAfter cancels a context once more than after bytes were read.
type cancelAfter struct {
	r      io.Reader
	after  int
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n += n; c.n > c.after {
		c.cancel()
	}
	return n, err
}

func testCanceled(t *testing.T, h Harness) {
	st := h.New(t)
	for _, size := range []int{100_000, h.Large} {
		ctx, cancel := context.WithCancel(bg)
		r := &cancelAfter{r: bytes.NewReader(Pattern(size)), after: 1000, cancel: cancel}
		if _, err := st.Put(ctx, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "x"}, r); !errors.Is(err, context.Canceled) {
			t.Fatalf("size %d: err = %v, want context.Canceled", size, err)
		}
	}
	assertEmpty(t, h, st)
}

func testInvalid(t *testing.T, h Harness) {
	st := h.New(t)
	for _, f := range []fileserve.NewFile{
		{Area: "", Owner: "o", Name: "x"},
		{Area: "../outputs", Owner: "o", Name: "x"},
		{Area: fileserve.Outputs, Owner: "", Name: "x"},
	} {
		if _, err := st.Put(bg, f, bytes.NewReader([]byte("x"))); err == nil {
			t.Errorf("Put(%+v) succeeded", f)
		}
	}
	for _, id := range []string{"", "../../etc/passwd", "0123456789ABCDEF0123456789abcdef", "0123456789abcdef"} {
		if _, err := st.Stat(bg, fileserve.Outputs, "o", id); !errors.Is(err, fileserve.ErrNotFound) {
			t.Errorf("Stat(%q) = %v, want ErrNotFound", id, err)
		}
		if _, _, err := st.Open(bg, fileserve.Outputs, "o", id); !errors.Is(err, fileserve.ErrNotFound) {
			t.Errorf("Open(%q) = %v, want ErrNotFound", id, err)
		}
		if err := st.Delete(bg, fileserve.Outputs, "o", id); err != nil {
			t.Errorf("Delete(%q) = %v", id, err)
		}
	}
	if err := st.Walk(bg, "elsewhere", func(fileserve.Meta) error { return nil }); err == nil {
		t.Error("Walk of an unknown area succeeded")
	}
	assertEmpty(t, h, st)
}

func testAdopt(t *testing.T, h Harness) {
	st := h.New(t)
	content := Pattern(300_000)
	path := filepath.Join(t.TempDir(), "scan.png")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := st.Adopt(bg, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o"}, path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "scan.png" || m.Size != int64(len(content)) || m.SHA256 != digest(content) {
		t.Errorf("meta = %+v", m)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the adopted file is still at %s (%v)", path, err)
	}
	if b := readAll(t, st, fileserve.Outputs, "o", m.ID); !bytes.Equal(b, content) {
		t.Error("adopted content differs")
	}
}

func testAdoptRefused(t *testing.T, h Harness) {
	st := h.New(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("secret"), 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Adopt(bg, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o"}, link); err == nil {
		t.Error("adopting a symbolic link succeeded")
	}
	if _, err := st.Adopt(bg, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o"}, dir); err == nil {
		t.Error("adopting a folder succeeded")
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, Pattern(5000), 0o600)
	if _, err := st.Adopt(bg, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", MaxBytes: 4000}, big); !errors.Is(err, fileserve.ErrTooLarge) {
		t.Errorf("adopting over the cap: %v, want ErrTooLarge", err)
	}
	if _, err := os.Stat(big); err != nil {
		t.Errorf("a refused file must stay where it was: %v", err)
	}
	assertEmpty(t, h, st)
}

func testOwnerIsolation(t *testing.T, h Harness) {
	st := h.New(t)
	m := put(t, st, fileserve.Outputs, "alice", "a.txt", []byte("alice's"))
	for _, c := range []struct {
		area  fileserve.Area
		owner string
	}{{fileserve.Outputs, "bob"}, {fileserve.Staging, "alice"}, {fileserve.Outputs, "Alice"}} {
		if _, err := st.Stat(bg, c.area, c.owner, m.ID); !errors.Is(err, fileserve.ErrNotFound) {
			t.Errorf("Stat as %s/%s: %v, want ErrNotFound", c.area, c.owner, err)
		}
		if _, _, err := st.Open(bg, c.area, c.owner, m.ID); !errors.Is(err, fileserve.ErrNotFound) {
			t.Errorf("Open as %s/%s: %v, want ErrNotFound", c.area, c.owner, err)
		}
		st.Delete(bg, c.area, c.owner, m.ID)
	}
	if _, err := st.Stat(bg, fileserve.Outputs, "alice", m.ID); err != nil {
		t.Errorf("another owner's Delete removed the file: %v", err)
	}
}

func testSeek(t *testing.T, h Harness) {
	st := h.New(t)
	content := Pattern(2 << 20)
	m := put(t, st, fileserve.Outputs, "o", "r.bin", content)
	obj, _, err := st.Open(bg, fileserve.Outputs, "o", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if n, err := obj.Seek(0, io.SeekEnd); err != nil || n != int64(len(content)) {
		t.Fatalf("Seek(0, End) = %d, %v", n, err)
	}
	for _, r := range []struct{ off, n int64 }{{1000, 100}, {0, 10}, {int64(len(content)) - 5, 5}, {1 << 20, 70_000}, {1<<20 + 70_000, 10}} {
		if _, err := obj.Seek(r.off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, r.n)
		if _, err := io.ReadFull(obj, b); err != nil || !bytes.Equal(b, content[r.off:r.off+r.n]) {
			t.Errorf("range %d+%d: %v or wrong bytes", r.off, r.n, err)
		}
	}
	if n, err := obj.Read(make([]byte, 1)); err != nil || n != 1 {
		// After the last range the object is at 1<<20+70_010: reading goes on.
		t.Errorf("read after ranges: %d, %v", n, err)
	}
	obj.Seek(0, io.SeekEnd)
	if n, err := obj.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Errorf("read at the end = %d, %v; want 0, EOF", n, err)
	}
}

func testDelete(t *testing.T, h Harness) {
	st := h.New(t)
	m := put(t, st, fileserve.Staging, "o", "x", []byte("x"))
	if err := st.Delete(bg, fileserve.Staging, "o", m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(bg, fileserve.Staging, "o", m.ID); !errors.Is(err, fileserve.ErrNotFound) {
		t.Errorf("Stat after Delete: %v", err)
	}
	if _, _, err := st.Open(bg, fileserve.Staging, "o", m.ID); !errors.Is(err, fileserve.ErrNotFound) {
		t.Errorf("Open after Delete: %v", err)
	}
	if err := st.Delete(bg, fileserve.Staging, "o", m.ID); err != nil {
		t.Errorf("deleting again: %v", err)
	}
	assertEmpty(t, h, st)
}

func testDeleteWhileReading(t *testing.T, h Harness) {
	st := h.New(t)
	content := Pattern(3 << 20)
	m := put(t, st, fileserve.Outputs, "o", "x.bin", content)
	obj, _, err := st.Open(bg, fileserve.Outputs, "o", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	first := make([]byte, 1000)
	if _, err := io.ReadFull(obj, first); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(bg, fileserve.Outputs, "o", m.ID); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("reading on after Delete: %v", err)
	}
	if !bytes.Equal(append(first, rest...), content) {
		t.Error("content read across a Delete differs")
	}
	if _, _, err := st.Open(bg, fileserve.Outputs, "o", m.ID); !errors.Is(err, fileserve.ErrNotFound) {
		t.Errorf("Open after Delete: %v", err)
	}
}

func testWalk(t *testing.T, h Harness) {
	st := h.New(t)
	want := map[string]fileserve.Meta{}
	for i, owner := range []string{"a", "b", "c", "a"} {
		m := put(t, st, fileserve.Outputs, owner, "f.txt", Pattern(i+1))
		want[m.ID] = m
	}
	put(t, st, fileserve.Staging, "a", "staged", []byte("s"))
	got := map[string]fileserve.Meta{}
	err := st.Walk(bg, fileserve.Outputs, func(m fileserve.Meta) error {
		got[m.ID] = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Walk found %d files, want %d", len(got), len(want))
	}
	for id, w := range want {
		if g := got[id]; g.Owner != w.Owner || g.Size != w.Size || !g.Created.Equal(w.Created) || g.Area != fileserve.Outputs {
			t.Errorf("Walk: %+v, want %+v", g, w)
		}
	}
	stop := errors.New("stop")
	calls := 0
	if err := st.Walk(bg, fileserve.Outputs, func(fileserve.Meta) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Walk stopped by fn: err %v after %d calls", err, calls)
	}
}

func testPrune(t *testing.T, h Harness) {
	st := h.New(t)
	keep := put(t, st, fileserve.Outputs, "o", "keep.txt", []byte("keep"))
	h.Abandon(t, st, fileserve.Outputs)
	if h.Remains(t, st) == 0 {
		t.Fatal("Abandon left nothing to prune")
	}
	// Young remains may be writes in progress elsewhere: kept.
	if err := st.Prune(bg, fileserve.Outputs, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if h.Remains(t, st) == 0 {
		t.Error("Prune removed remains younger than its limit")
	}
	// Two replicas prune at once: both succeed, the remains are gone, the
	// complete file stays.
	other := h.Another(t, st)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range []fileserve.Store{st, other} {
		wg.Go(func() { errs[i] = s.Prune(bg, fileserve.Outputs, time.Now().Add(time.Hour)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Prune: %v", err)
	}
	if n := h.Remains(t, st); n != 0 {
		t.Errorf("%d remains after Prune", n)
	}
	if b := readAll(t, st, fileserve.Outputs, "o", keep.ID); string(b) != "keep" {
		t.Errorf("Prune damaged a complete file: %q", b)
	}
	if err := st.Prune(bg, "nowhere", time.Now()); err == nil {
		t.Error("Prune of an unknown area succeeded")
	}
}

func testConcurrent(t *testing.T, h Harness) {
	st := h.New(t)
	const n = 8
	metas := make([]fileserve.Meta, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			metas[i], errs[i] = st.Put(bg, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "same.bin"}, bytes.NewReader(Pattern(10_000+i)))
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for i, m := range metas {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if ids[m.ID] {
			t.Fatalf("id %s handed out twice", m.ID)
		}
		ids[m.ID] = true
		if b := readAll(t, st, fileserve.Outputs, "o", m.ID); !bytes.Equal(b, Pattern(10_000+i)) {
			t.Errorf("file %d: content of another", i)
		}
	}
}

func testSharedBacking(t *testing.T, h Harness) {
	a := h.New(t)
	b := h.Another(t, a)
	content := Pattern(70_000)
	m := put(t, a, fileserve.Outputs, "o", "shared.bin", content)
	if got := readAll(t, b, fileserve.Outputs, "o", m.ID); !bytes.Equal(got, content) {
		t.Error("a file stored through one store reads differently through the other")
	}
	if err := b.Delete(bg, fileserve.Outputs, "o", m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Stat(bg, fileserve.Outputs, "o", m.ID); !errors.Is(err, fileserve.ErrNotFound) {
		t.Errorf("deleted through one store, Stat through the other: %v", err)
	}
}

func testReady(t *testing.T, h Harness) {
	st := h.New(t)
	if err := st.Ready(bg); err != nil {
		t.Fatal(err)
	}
	if n := h.Remains(t, st); n != 0 {
		t.Errorf("Ready left %d remains", n)
	}
}

// testPending: NewFile.Pending sees the final metadata while the file is
// not yet visible, for Put and Adopt, small and multipart; its error fails
// the add and leaves nothing.
func testPending(t *testing.T, h Harness) {
	st := h.New(t)
	var seen []fileserve.Meta
	pending := func(m fileserve.Meta) error {
		if _, err := st.Stat(bg, m.Area, m.Owner, m.ID); !errors.Is(err, fileserve.ErrNotFound) {
			t.Errorf("file %s is visible before Pending returned (Stat: %v)", m.ID, err)
		}
		seen = append(seen, m)
		return nil
	}
	for _, size := range []int{1000, h.Large} {
		nf := fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "p.bin", Pending: pending}
		m, err := st.Put(bg, nf, bytes.NewReader(Pattern(size)))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "a.bin")
		if err := os.WriteFile(path, Pattern(size), 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := st.Adopt(bg, nf, path)
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) < 2 || seen[len(seen)-2] != m || seen[len(seen)-1] != a {
			t.Errorf("size %d: Pending saw %+v, the adds returned %+v and %+v", size, seen, m, a)
		}
		st.Delete(bg, m.Area, m.Owner, m.ID)
		st.Delete(bg, a.Area, a.Owner, a.ID)
	}
	refuse := errors.New("journal full")
	for _, size := range []int{1000, h.Large} {
		nf := fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "r.bin", Pending: func(fileserve.Meta) error { return refuse }}
		if _, err := st.Put(bg, nf, bytes.NewReader(Pattern(size))); !errors.Is(err, refuse) {
			t.Errorf("size %d: Put with a failing Pending: err = %v, want its error", size, err)
		}
		path := filepath.Join(t.TempDir(), "r.bin")
		if err := os.WriteFile(path, Pattern(size), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Adopt(bg, nf, path); !errors.Is(err, refuse) {
			t.Errorf("size %d: Adopt with a failing Pending: err = %v, want its error", size, err)
		}
	}
	assertEmpty(t, h, st)
}
