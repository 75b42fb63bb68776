package agentcore

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if _, err := os.Stat(filepath.Join(call.dir, journalFile)); !errors.Is(err, os.ErrNotExist) {
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
