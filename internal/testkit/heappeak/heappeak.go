// Package heappeak measures how far the live heap grows while a function
// runs, for benchmarks that promise to stream rather than buffer.
package heappeak

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Measure runs fn and returns the most the live heap grew above where it
// stood when fn started, in bytes. It samples every two milliseconds with
// runtime/metrics, which does not stop the world, so a peak shorter than
// that can slip through; a buffered copy of a large file cannot.
func Measure(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak uint64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if v := read(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}
