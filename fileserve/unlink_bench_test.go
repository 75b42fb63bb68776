package fileserve_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// unlinkLayouts are the ways of keeping a file that BenchmarkUnlinkFloor
// deletes: the DiskStore's (a folder per file holding its content and
// meta.json), two flat files per id, one flat file, and one empty flat file
// (no block to free: the cost of the unlink alone).
var unlinkLayouts = []struct {
	name   string
	folder bool // a folder per id, removed last
	files  int  // files per id
	size   int  // bytes per file
}{
	{"folder-2files", true, 2, 1},
	{"flat-2files", false, 2, 1},
	{"flat-1file", false, 1, 1},
	{"flat-empty", false, 1, 0},
}

// unlinkWorkers is how many goroutines delete at once: the sweeper's
// cleanup.DefaultWorkers.
const unlinkWorkers = 8

// BenchmarkUnlinkFloor is the floor under BenchmarkSweepAllExpired: what
// deleting sweepFiles ids costs with bare system calls (unlink, and rmdir
// for the folder layout), 8 at a time in the order they were written, no
// index, no store, after the files were synced to disk; the ids are spread
// over 100 folders as BenchmarkSweepAllExpired's are over 100 owners. It reports ns/file, and sync-s/op for the sync(2)
// after the deletions (not timed). On a file system mounted with discard
// each freed block is trimmed as the journal commits, which makes a file of
// one block cost far more to delete than an empty one; compare
// AGENTURA_SWEEP_DIR on such a file system and on one without discard:
//
//	AGENTURA_SWEEP_FILES=30000 go test -run '^$' -bench UnlinkFloor -benchtime 1x ./fileserve
func BenchmarkUnlinkFloor(b *testing.B) {
	n := sweepFiles(b)
	for _, l := range unlinkLayouts {
		b.Run(l.name, func(b *testing.B) {
			root := sweepDir(b)
			var synced time.Duration
			for range b.N {
				b.StopTimer()
				paths := seedFlat(b, root, n, l.folder, l.files, l.size)
				syncAll()
				b.StartTimer()
				unlinkAll(b, paths, l.folder, l.files)
				b.StopTimer()
				synced += syncAll()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/file")
			b.ReportMetric(synced.Seconds()/float64(b.N), "sync-s/op")
		})
	}
}

// seedFlat writes n ids under root, spread over 100 parent folders as Seed
// spreads files over 100 owners, each id files files of size bytes, in a
// folder of its own when folder is set; it returns the ids' paths (the
// folder, or the common prefix of the flat files).
func seedFlat(b *testing.B, root string, n int, folder bool, files, size int) []string {
	content := make([]byte, size)
	paths := make([]string, n)
	for i := range n {
		parent := filepath.Join(root, fmt.Sprintf("owner-%d", i%100))
		if i < 100 {
			if err := os.MkdirAll(parent, 0o700); err != nil {
				b.Fatal(err)
			}
		}
		p := filepath.Join(parent, fmt.Sprintf("%08d", i))
		if folder {
			if err := os.Mkdir(p, 0o700); err != nil {
				b.Fatal(err)
			}
		}
		for k := range files {
			if err := os.WriteFile(filePath(p, folder, k), content, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		paths[i] = p
	}
	return paths
}

// filePath is the k-th file of the id at p.
func filePath(p string, folder bool, k int) string {
	if folder {
		return filepath.Join(p, fmt.Sprint(k))
	}
	return fmt.Sprintf("%s.%d", p, k)
}

// unlinkAll deletes what seedFlat wrote, unlinkWorkers at a time.
func unlinkAll(b *testing.B, paths []string, folder bool, files int) {
	work := make(chan string)
	var wg sync.WaitGroup
	var failed sync.Once
	for range unlinkWorkers {
		wg.Go(func() {
			for p := range work {
				var err error
				for k := range files {
					if e := syscall.Unlink(filePath(p, folder, k)); e != nil && err == nil {
						err = e
					}
				}
				if folder && err == nil {
					err = syscall.Rmdir(p)
				}
				if err != nil {
					failed.Do(func() { b.Errorf("delete %s: %v", p, err) })
				}
			}
		})
	}
	for _, p := range paths {
		work <- p
	}
	close(work)
	wg.Wait()
}
