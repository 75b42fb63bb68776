package agentcore

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore/internal/callfiles"
	"github.com/agentura/agentura/fileserve"
)

// failingAfterVisible is a store whose Put of b.txt makes the file visible
// and then reports failure, as an S3 PUT whose answer is lost may.
type failingAfterVisible struct{ *fileserve.DiskStore }

func (s failingAfterVisible) Put(ctx context.Context, f fileserve.NewFile, r io.Reader) (fileserve.Meta, error) {
	m, err := s.DiskStore.Put(ctx, f, r)
	if err == nil && f.Name == "b.txt" {
		return fileserve.Meta{}, errors.New("connection reset after the write")
	}
	return m, err
}

// A store that fails after making an output visible: the journal still
// knows the output, so the failed response keeps nothing.
func TestFileResponseStoreFailsAfterVisible(t *testing.T) {
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc := newTestService(t, func(c *Config) { c.Store = failingAfterVisible{disk} })
	ctx := context.Background()
	call := svc.newCall("make", "alice", "")
	defer call.end()
	if _, err := call.FileResponse(ctx, OutputBytes("a.txt", []byte("first")), OutputBytes("b.txt", []byte("second"))); err == nil {
		t.Fatal("FileResponse succeeded")
	}
	n := 0
	disk.Walk(ctx, fileserve.Outputs, func(fileserve.Meta) error { n++; return nil })
	if n != 0 {
		t.Errorf("%d files stayed stored after a failed response", n)
	}
	if _, err := os.Stat(filepath.Join(call.dir, callfiles.JournalFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the journal outlived the response: %v", err)
	}
}

// gate blocks a reader's first read until opened.
type gate struct {
	reached, open chan struct{}
	r             io.Reader
}

func (g *gate) Read(p []byte) (int, error) {
	if g.reached != nil {
		close(g.reached)
		g.reached = nil
		<-g.open
	}
	return g.r.Read(p)
}

// A second process starting on the same store while a response is half
// stored leaves it alone (the first process's lock is held): neither its
// first output nor the temporary file of its second is removed, and the
// response completes whole.
func TestStartingProcessLeavesLiveResponseAlone(t *testing.T) {
	data := t.TempDir()
	a := newTestService(t, func(c *Config) { c.DataDir = data })
	ctx := context.Background()
	call := a.newCall("make", "alice", "")
	defer call.end()
	g := &gate{reached: make(chan struct{}), open: make(chan struct{}), r: strings.NewReader("second")}
	reached := g.reached
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := call.FileResponse(ctx, OutputBytes("a.txt", []byte("first")), OutputReader("b.txt", g))
		done <- outcome{res, err}
	}()
	<-reached
	b := newTestService(t, func(c *Config) { c.DataDir = data })
	b.sweeper.Sweep(ctx)
	close(g.open)
	out := <-done
	if out.err != nil || len(out.res.stored) != 2 {
		t.Fatalf("the response of the live process: %v", out.err)
	}
	for _, m := range out.res.stored {
		if _, err := a.store.Stat(ctx, m.Area, m.Owner, m.ID); err != nil {
			t.Errorf("output %s of the live process: %v", m.Name, err)
		}
	}
}

// recordsOnly is a store with records whose files do not lie in a local
// folder, as S3's: its output journals are records of the store.
type recordsOnly struct {
	fileserve.Store
	fileserve.RecordStore
}

// A replica that comes back on a fresh data folder (its call folders and
// their locks lost) finds the journal of the response its predecessor did
// not finish in the shared store, and rolls it back once the journal's
// lease has lapsed: the orphan is gone and no quota counts it. While the
// lease runs, the journal is left alone.
func TestJournalInSharedStoreOutlivesTheVolume(t *testing.T) {
	disk, err := fileserve.NewDiskStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := recordsOnly{disk, disk}
	a := newTestService(t, func(c *Config) { c.Store = st })
	ctx := context.Background()
	call := a.newCall("make", "alice", "")
	defer call.end()
	g := &gate{reached: make(chan struct{}), open: make(chan struct{}), r: &failingReader{}}
	reached := g.reached
	done := make(chan error, 1)
	go func() {
		_, err := call.FileResponse(ctx, OutputBytes("a.txt", []byte("first")), OutputReader("b.txt", g))
		done <- err
	}()
	<-reached // the first output is stored, its journal a record
	infos, _ := disk.Records(ctx, callfiles.PendingKind, callfiles.JournalOwner)
	if len(infos) != 1 {
		t.Fatalf("journal records while the response runs: %v; want 1", infos)
	}
	if _, err := os.Stat(filepath.Join(call.dir, callfiles.JournalFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a local journal was written beside the record: %v", err)
	}

	b := newTestService(t, func(c *Config) { c.Store = st; c.OwnerQuotaBytes = 1 << 20 }) // a fresh data folder
	b.sweeper.Sweep(ctx)
	if n := countFiles(t, disk, fileserve.Outputs); n != 1 {
		t.Fatalf("the other replica rolled back a journal whose lease runs: %d outputs left, want 1", n)
	}
	// The lease lapses: the journal was last written long ago.
	old := time.Now().Add(-2 * callfiles.JournalLease)
	os.Chtimes(filepath.Join(disk.Root(), fileserve.RecordsDir, callfiles.PendingKind, fileserve.OwnerKey(callfiles.JournalOwner), infos[0].Name), old, old)
	b.sweeper.Sweep(ctx)
	if n := countFiles(t, disk, fileserve.Outputs); n != 0 {
		t.Errorf("after the lease lapsed %d outputs of the dead response are still stored", n)
	}
	if left, _ := disk.Records(ctx, callfiles.PendingKind, callfiles.JournalOwner); len(left) != 0 {
		t.Errorf("the journal record is still there: %v", left)
	}
	if used, _ := b.quota.Used(ctx, "alice"); used != 0 {
		t.Errorf("the quota still counts %d bytes of the rolled-back output", used)
	}
	close(g.open)
	<-done
}

// failingReader fails its first read, as a dying process's output would.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("the process died") }

func countFiles(t *testing.T, st fileserve.Store, area fileserve.Area) int {
	t.Helper()
	n := 0
	st.Walk(context.Background(), area, func(fileserve.Meta) error { n++; return nil })
	return n
}
