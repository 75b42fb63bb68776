package fileserve_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/cleanup"
	"github.com/agentura/agentura/fileserve"
)

// sweepFiles is how many files the sweep benchmarks store:
// AGENTURA_SWEEP_FILES, or 100,000.
func sweepFiles(b *testing.B) int {
	if v := os.Getenv("AGENTURA_SWEEP_FILES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("AGENTURA_SWEEP_FILES=%q: want a positive count", v)
		}
		return n
	}
	return 100_000
}

// sweepDir is a fresh folder for a sweep benchmark's files: under
// AGENTURA_SWEEP_DIR when it is set (to choose the file system measured, say
// an ext4 mounted without discard), else under b.TempDir (TMPDIR). It is
// removed when the benchmark ends.
func sweepDir(b *testing.B) string {
	parent := os.Getenv("AGENTURA_SWEEP_DIR")
	if parent == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "sweepbench-")
	if err != nil {
		b.Fatalf("AGENTURA_SWEEP_DIR=%q: %v", parent, err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// syncAll writes every dirty block of every file system to disk and commits
// the journals (sync(2)). After seeding it makes the files what the store's
// commit leaves (content and metadata allocated on disk, fsynced), so that
// deleting them frees real blocks; without it many are still delayed
// allocations that a deletion drops for free. It returns how long it took.
func syncAll() time.Duration {
	began := time.Now()
	syscall.Sync()
	return time.Since(began)
}

// walkOnly hides a store's expiry index: the sweeper walks every file, as
// it did before stores had an index.
type walkOnly struct{ fileserve.Store }

// sweepVariants are the two ways of sweeping: through the expiry index with
// concurrent deletions (now), and walking every file's metadata with one
// deletion at a time (before; the figures the index is measured against).
var sweepVariants = []struct {
	name    string
	indexed bool
	workers int
}{
	{"index", true, 0},
	{"walk", false, 1},
}

func newSweepStore(b *testing.B) *fileserve.DiskStore {
	st, err := fileserve.NewDiskStore(filepath.Join(sweepDir(b), "data"))
	if err != nil {
		b.Fatal(err)
	}
	return st
}

func sweeperFor(b *testing.B, st *fileserve.DiskStore, indexed bool, workers int, now time.Time) *cleanup.Sweeper {
	var store fileserve.Store = st
	if !indexed {
		store = walkOnly{st}
	}
	s, err := cleanup.New(cleanup.Config{
		Store:   store,
		Rules:   []cleanup.Rule{{Area: fileserve.Outputs, TTL: time.Hour}},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:     func() time.Time { return now },
		Workers: workers,
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkSweepNothingExpired sweeps a store of sweepFiles live files, none
// expired, synced to disk. The first sweep (the sweeper's full Prune) is left
// out: this is what every scheduled sweep after it costs.
//
//	go test -run '^$' -bench SweepNothingExpired -benchtime 5x ./fileserve
//	AGENTURA_SWEEP_DIR=/mnt/e4 AGENTURA_SWEEP_FILES=10000 go test -run '^$' -bench SweepNothingExpired/index -benchtime 5x ./fileserve
func BenchmarkSweepNothingExpired(b *testing.B) {
	n := sweepFiles(b)
	for _, v := range sweepVariants {
		b.Run(v.name, func(b *testing.B) {
			st := newSweepStore(b)
			now := time.Now()
			if err := fileserve.Seed(st, fileserve.Outputs, n, now.Add(-time.Minute), v.indexed); err != nil {
				b.Fatal(err)
			}
			syncAll()
			s := sweeperFor(b, st, v.indexed, v.workers, now)
			if _, err := s.Sweep(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				stats, err := s.Sweep(context.Background())
				if err != nil || stats.Files != 0 {
					b.Fatalf("sweep: %+v, %v; want nothing deleted", stats, err)
				}
			}
		})
	}
}

// BenchmarkSweepAllExpired sweeps a store of sweepFiles files that have all
// expired, synced to disk as the store's commit leaves them, with a sweeper
// whose full Prune already ran. Besides the sweep's time it reports
// sync-s/op, the sync(2) right after the sweep (not timed): on a file
// system that trims freed blocks at the journal commit (mounted with
// discard), what the sweep left to that commit.
//
//	go test -run '^$' -bench SweepAllExpired -benchtime 2x ./fileserve
//	AGENTURA_SWEEP_DIR=/mnt/e4 AGENTURA_SWEEP_FILES=10000 go test -run '^$' -bench SweepAllExpired/index -benchtime 1x ./fileserve
func BenchmarkSweepAllExpired(b *testing.B) {
	n := sweepFiles(b)
	for _, v := range sweepVariants {
		b.Run(v.name, func(b *testing.B) {
			st := newSweepStore(b)
			now := time.Now()
			s := sweeperFor(b, st, v.indexed, v.workers, now)
			if _, err := s.Sweep(context.Background()); err != nil { // the first sweep's full Prune
				b.Fatal(err)
			}
			var synced time.Duration
			for range b.N {
				b.StopTimer()
				if err := fileserve.Seed(st, fileserve.Outputs, n, now.Add(-2*time.Hour), v.indexed); err != nil {
					b.Fatal(err)
				}
				syncAll()
				b.StartTimer()
				stats, err := s.Sweep(context.Background())
				if err != nil || stats.Files != n {
					b.Fatalf("sweep: %+v, %v; want %d files deleted", stats, err, n)
				}
				b.StopTimer()
				synced += syncAll()
				b.StartTimer()
			}
			b.ReportMetric(synced.Seconds()/float64(b.N), "sync-s/op")
		})
	}
}
