package ops

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/agentura/agentura/internal/lib/memcg"
)

// FitMemoryLimit gives the Go runtime a soft memory limit below the hard
// limit of the process's memory cgroup (a container's mem_limit), unless
// GOMEMLIMIT is set: without it the heap may grow to twice what is live
// before a collection, and a container whose limits fit its live memory is
// OOM-killed anyway. The soft limit is the hard one less a fifth (at least
// 64 MiB) for stacks, buffers and what is not Go heap.
func FitMemoryLimit(log *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := memcg.SelfLimit()
	if limit <= 0 || limit >= 1<<50 {
		return
	}
	soft := limit - max(limit/5, 64<<20)
	if soft <= 0 {
		return
	}
	debug.SetMemoryLimit(soft)
	log.Info("memory limit of the container found; the Go heap is kept below it", "cgroup_limit_bytes", limit, "gomemlimit_bytes", soft)
}
