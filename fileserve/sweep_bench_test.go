package fileserve_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/cleanup"
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
	st, err := fileserve.NewDiskStore(filepath.Join(b.TempDir(), "data"))
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
// expired. The first sweep (the sweeper's full Prune) is left out: this is
// what every scheduled sweep after it costs.
//
//	go test -run '^$' -bench SweepNothingExpired -benchtime 5x ./fileserve
func BenchmarkSweepNothingExpired(b *testing.B) {
	n := sweepFiles(b)
	for _, v := range sweepVariants {
		b.Run(v.name, func(b *testing.B) {
			st := newSweepStore(b)
			now := time.Now()
			if err := fileserve.Seed(st, fileserve.Outputs, n, now.Add(-time.Minute), v.indexed); err != nil {
				b.Fatal(err)
			}
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
// expired, with a sweeper whose full Prune already ran.
//
//	go test -run '^$' -bench SweepAllExpired -benchtime 2x ./fileserve
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
			for range b.N {
				b.StopTimer()
				if err := fileserve.Seed(st, fileserve.Outputs, n, now.Add(-2*time.Hour), v.indexed); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				stats, err := s.Sweep(context.Background())
				if err != nil || stats.Files != n {
					b.Fatalf("sweep: %+v, %v; want %d files deleted", stats, err, n)
				}
			}
		})
	}
}
