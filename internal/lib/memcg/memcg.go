// Package memcg reads the memory limit of this process's cgroup, which an
// agent fits its Go heap to (GOMEMLIMIT). It works with cgroup v2
// (memory.max) and with v1's memory controller (memory.limit_in_bytes).
package memcg

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SelfPaths returns this process's cgroup paths: of v1's memory controller
// and of the v2 hierarchy ("" for one it is not in).
func SelfPaths() (v1, v2 string, err error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case strings.Contains(","+parts[1]+",", ",memory,"):
			v1 = parts[2]
		}
	}
	return v1, v2, nil
}

// SelfLimit is the memory limit of this process's cgroup (v1
// memory.limit_in_bytes, or v2 memory.max), or 0 when there is none to read.
func SelfLimit() int64 {
	v1, v2, err := SelfPaths()
	if err != nil {
		return 0
	}
	var files []string
	if v1 != "" {
		files = append(files, filepath.Join("/sys/fs/cgroup/memory", v1, "memory.limit_in_bytes"))
	}
	if v2 != "" {
		files = append(files, filepath.Join("/sys/fs/cgroup", v2, "memory.max"))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 0
}
