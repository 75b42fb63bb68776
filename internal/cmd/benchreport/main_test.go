package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tracing row averages each percentile over the runs and compares the
// medians: 2 % over passes, 10 % over misses, and no run at all misses.
func TestTracingTable(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		ok        bool
		want      []string
	}{
		{"within", `BenchmarkToolCallTracing-2   2000  4000000 ns/op  2.000 off-p50-ms  6.000 off-p99-ms  2.000 on-p50-ms  7.000 on-p99-ms
BenchmarkToolCallTracing-2   2000  4000000 ns/op  2.000 off-p50-ms  8.000 off-p99-ms  2.080 on-p50-ms  9.000 on-p99-ms
BenchmarkToolCallTracingOff-2   2000  2000000 ns/op  900000 B/op  1500 allocs/op
`, true, []string{"tools/call echo", " 2.00 ", " 2.04 ", "2.0 %", "<5 % ok", " 7.00 ", " 8.00\n"}},
		{"over", "BenchmarkToolCallTracing-2  100  1 ns/op  2.000 off-p50-ms  3 off-p99-ms  2.200 on-p50-ms  4 on-p99-ms\n",
			false, []string{"10.0 %", "<5 % MISSED"}},
		{"missing", "BenchmarkToolCallTracingOn-2  100  1 ns/op\n", false, []string{"missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bench.txt")
			if err := os.WriteFile(path, []byte(tc.out), 0o600); err != nil {
				t.Fatal(err)
			}
			results, err := parse(path)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if ok := tracingTable(&b, results); ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
			if !strings.HasPrefix(b.String(), "tool call, tracing on vs off") {
				t.Errorf("no title:\n%s", b.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in:\n%s", w, b.String())
				}
			}
		})
	}
}
