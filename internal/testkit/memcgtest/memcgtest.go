// Package memcgtest puts a test's child process into a memory cgroup of its
// own with a hard limit, reading back its peak use and OOM kills: the proof
// that an agent's limits fit the memory its container is given. It works
// with cgroup v2 and with v1's memory controller, creating the group below
// the process's own.
package memcgtest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentura/agentura/internal/lib/memcg"
)

// Group is a memory cgroup made for a test.
type Group struct {
	// Dir is the group's folder; V2 tells which interface it has.
	Dir string
	V2  bool
}

// New creates a group named name below this process's own memory cgroup,
// limited to limit bytes of memory (and no swap). It fails, saying why, when
// cgroups are not writable here (not root, no memory controller).
func New(name string, limit int64) (*Group, error) {
	v1, v2, err := memcg.SelfPaths()
	if err != nil {
		return nil, err
	}
	var g *Group
	switch {
	case v1 != "" && exists("/sys/fs/cgroup/memory/memory.limit_in_bytes"):
		g = &Group{Dir: filepath.Join("/sys/fs/cgroup/memory", v1, name)}
	case v2 != "" && exists("/sys/fs/cgroup/cgroup.controllers"):
		g = &Group{Dir: filepath.Join("/sys/fs/cgroup", v2, name), V2: true}
	default:
		return nil, errors.New("no writable memory cgroup: neither cgroup v2 at /sys/fs/cgroup nor v1's memory controller")
	}
	os.Remove(g.Dir) // a leftover of an earlier run
	if err := os.Mkdir(g.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w", g.Dir, err)
	}
	set := func(file, value string) error {
		return os.WriteFile(filepath.Join(g.Dir, file), []byte(value), 0o644)
	}
	lim := strconv.FormatInt(limit, 10)
	if g.V2 {
		err = set("memory.max", lim)
		if err == nil {
			set("memory.swap.max", "0")
		}
	} else {
		err = set("memory.limit_in_bytes", lim)
		if err == nil {
			set("memory.memsw.limit_in_bytes", lim)
		}
	}
	if err != nil {
		os.Remove(g.Dir)
		return nil, fmt.Errorf("limit cgroup %s: %w", g.Dir, err)
	}
	return g, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Peak is the most memory the group has used (v1: since ResetPeak).
func (g *Group) Peak() int64 {
	file := "memory.max_usage_in_bytes"
	if g.V2 {
		file = "memory.peak"
	}
	b, _ := os.ReadFile(filepath.Join(g.Dir, file))
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// ResetPeak starts a new peak (v1; v2 kernels that allow it).
func (g *Group) ResetPeak() {
	file := "memory.max_usage_in_bytes"
	if g.V2 {
		file = "memory.peak"
	}
	os.WriteFile(filepath.Join(g.Dir, file), []byte("0"), 0o644)
}

// OOMKills is how many processes of the group the kernel killed for memory.
func (g *Group) OOMKills() int {
	file := "memory.oom_control"
	if g.V2 {
		file = "memory.events"
	}
	f, err := os.Open(filepath.Join(g.Dir, file))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == "oom_kill" {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// Close removes the group once its processes are gone (waiting up to 5 s).
func (g *Group) Close() error {
	var err error
	for range 50 {
		if err = os.Remove(g.Dir); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
