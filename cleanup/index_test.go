package cleanup_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/agentura/agentura/cleanup"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/testkit/s3test"
)

// testOldLayout: files written before the store had an expiry index (here:
// files whose index was then removed) are found and swept by the first
// sweep, whose full Prune indexes them; the live ones, indexed by it, expire
// in a later sweep that only tidies.
func testOldLayout(t *testing.T, st fileserve.Store, dropIndex func()) {
	var old []fileserve.Meta
	for range 3 {
		old = append(old, put(t, st, fileserve.Outputs, "alice", "old.txt", []byte("old")))
	}
	b := boundary(t)
	live := put(t, st, fileserve.Outputs, "bob", "live.txt", []byte("live"))
	dropIndex()

	var now atomic.Pointer[time.Time]
	setNow := func(t time.Time) { now.Store(&t) }
	setNow(b.Add(outputTTL))
	s := newSweeper(t, cleanup.Config{Store: st, Now: func() time.Time { return *now.Load() }})
	if stats := sweep(t, s); stats.Files != len(old) {
		t.Errorf("first sweep deleted %d files, want the %d old-layout files that expired", stats.Files, len(old))
	}
	for _, m := range old {
		if exists(t, st, m) {
			t.Errorf("expired old-layout file %s survived", m.ID)
		}
	}
	if !exists(t, st, live) {
		t.Fatal("a live old-layout file was swept")
	}
	setNow(time.Now().Add(outputTTL + time.Hour))
	if stats := sweep(t, s); stats.Files != 1 || exists(t, st, live) {
		t.Errorf("second sweep deleted %d files (live file still there: %v); want the old-layout file, indexed by the first sweep", stats.Files, exists(t, st, live))
	}
}

func TestSweepFindsOldLayoutFilesOnDisk(t *testing.T) {
	st := newStore(t)
	testOldLayout(t, st, func() {
		if err := os.RemoveAll(filepath.Join(st.Root(), "index")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSweepFindsOldLayoutFilesOnS3(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	st, err := fileserve.OpenStore(context.Background(), srv.StorageURL(bucket), srv.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	testOldLayout(t, st, func() {
		ctx := context.Background()
		n := 0
		for obj := range srv.Client().ListObjectsIter(ctx, bucket, minio.ListObjectsOptions{Prefix: "index/", Recursive: true}) {
			if obj.Err != nil {
				t.Fatal(obj.Err)
			}
			if err := srv.Client().RemoveObject(ctx, bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 4 {
			t.Fatalf("the bucket held %d index entries, want 4", n)
		}
	})
}

// TestLongSweepMovesCutoff: a sweep that deleted files looks again with
// the cutoff of the time it has reached, so files that expired while it ran
// go in the same sweep.
func TestLongSweepMovesCutoff(t *testing.T) {
	st := newStore(t)
	first := put(t, st, fileserve.Outputs, "alice", "a.txt", []byte("a"))
	b1 := boundary(t)
	second := put(t, st, fileserve.Outputs, "alice", "b.txt", []byte("b"))
	b2 := boundary(t)
	third := put(t, st, fileserve.Outputs, "alice", "c.txt", []byte("c"))
	// The clock reads b1+TTL when the sweep starts, and b2+TTL once it has
	// deleted what expired by then: the sweep is "long".
	var calls atomic.Int32
	now := func() time.Time {
		if calls.Add(1) == 1 {
			return b1.Add(outputTTL)
		}
		return b2.Add(outputTTL)
	}
	s := newSweeper(t, cleanup.Config{Store: st, Now: now})
	if stats := sweep(t, s); stats.Files != 2 {
		t.Errorf("sweep deleted %d files, want 2: the one expired at its start and the one expired while it ran", stats.Files)
	}
	if exists(t, st, first) || exists(t, st, second) || !exists(t, st, third) {
		t.Errorf("after the sweep: first %v, second %v, third %v; want only the third", exists(t, st, first), exists(t, st, second), exists(t, st, third))
	}
}

// TestDeletesRunConcurrentlyWithinTheBound: a sweep deletes Workers files at
// once, never more.
func TestDeletesRunConcurrentlyWithinTheBound(t *testing.T) {
	disk := newStore(t)
	for range 9 {
		put(t, disk, fileserve.Outputs, "alice", "f.txt", []byte("f"))
	}
	b := boundary(t)
	var inflight, peak atomic.Int32
	st := &hookStore{Store: disk, onDelete: func(string) error {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(50 * time.Millisecond) // slow deletions overlap
		return nil
	}}
	s := newSweeper(t, cleanup.Config{Store: st, Now: at(b.Add(outputTTL)), Workers: 3})
	if stats := sweep(t, s); stats.Files != 9 {
		t.Errorf("sweep deleted %d files, want 9", stats.Files)
	}
	if p := peak.Load(); p != 3 {
		t.Errorf("at most %d deletions ran at once, want 3 (Workers)", p)
	}
}
