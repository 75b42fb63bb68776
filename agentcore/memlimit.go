package agentcore

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// fitMemoryLimit gives the Go runtime a soft memory limit below the hard
// limit of the process's memory cgroup (a container's mem_limit), unless
// GOMEMLIMIT is set: without it the heap may grow to twice what is live
// before a collection, and a container whose limits fit its live memory is
// OOM-killed anyway. The soft limit is the hard one less a fifth (at least
// 64 MiB) for stacks, buffers and what is not Go heap.
func fitMemoryLimit(log *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := cgroupMemoryLimit()
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

// cgroupMemoryLimit reads the memory limit of this process's cgroup (v2
// memory.max, or v1 memory.limit_in_bytes); 0 when there is none.
func cgroupMemoryLimit() int64 {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = filepath.Join("/sys/fs/cgroup", parts[2], "memory.max")
		case strings.Contains(","+parts[1]+",", ",memory,"):
			file = filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
		default:
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 0
}
