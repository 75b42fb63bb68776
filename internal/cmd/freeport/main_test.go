package main

import (
	"net"
	"slices"
	"strings"
	"testing"
)

func TestRunPrintsDistinctFreePorts(t *testing.T) {
	out, err := run([]string{"5"})
	if err != nil {
		t.Fatal(err)
	}
	ports := strings.Fields(out)
	if len(ports) != 5 {
		t.Fatalf("%q: want 5 ports", out)
	}
	sorted := slices.Clone(ports)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != 5 {
		t.Errorf("%q: a port twice", out)
	}
	for _, p := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			t.Errorf("port %s is not free after freeport: %v", p, err)
			continue
		}
		ln.Close()
	}
}

func TestRunRefusesBadCounts(t *testing.T) {
	for _, args := range [][]string{nil, {"0"}, {"65"}, {"x"}, {"1", "2"}} {
		if out, err := run(args); err == nil {
			t.Errorf("%q: %q, want an error", args, out)
		}
	}
}
