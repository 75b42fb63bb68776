// Command benchreport reads `go test -bench` output and prints the project's
// performance targets as a table: signed downloads against http.FileServer
// on the same file, resolution of a 50 MiB base64 input, and a 50 MiB
// upload, each streamed input with the most the heap grew meanwhile; and a
// tool call's latency with tracing off and on.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// result is the mean of the runs of one benchmark.
type result struct {
	runs    int
	mbps    float64
	metrics map[string]float64
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchreport BENCH_OUTPUT_FILE")
		os.Exit(2)
	}
	results, err := parse(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ok := true
	fmt.Println()
	fmt.Printf("%-10s %12s %16s %7s %9s %22s %7s\n", "download", "signed MB/s", "FileServer MB/s", "ratio", "target", "FileServer, same bytes", "ratio")
	for _, size := range []string{"4KiB", "256MiB"} {
		r := find(results, "Download/"+size)
		if r == nil {
			fmt.Printf("%-10s %12s\n", size, "missing")
			ok = false
			continue
		}
		signed, plain, same := r.metrics["signed-MB/s"], r.metrics["fileserver-MB/s"], r.metrics["same-bytes-MB/s"]
		ratio := r.metrics["signed/fileserver"]
		mark := "ok"
		if ratio < 0.9 {
			mark, ok = "MISSED", false
		}
		fmt.Printf("%-10s %12.1f %16.1f %7.2f %9s %22.1f %7.2f\n", size, signed, plain, ratio, "≥0.9 "+mark, same, signed/same)
	}
	fmt.Println("(paired requests, one to each server in turn; same bytes: http.FileServer answering the signed")
	fmt.Println(" URL's query with the same security headers, so only the signed handler's own work differs)")
	fmt.Println()
	ok = streamTable(results, "resolve 50 MiB inline input", "ResolveBase64/", []string{"data-uri", "base64"}) && ok
	ok = streamTable(results, "upload 50 MiB to /uploads", "Upload/", []string{"raw", "multipart"}) && ok
	ok = tracingTable(os.Stdout, results) && ok
	if !ok {
		fmt.Println("some targets were missed")
	}
}

// streamTable prints throughput and heap growth of 50 MiB streamed inputs;
// the target is that the heap never grows by the size of the file.
func streamTable(results map[string]*result, title, prefix string, forms []string) bool {
	ok := true
	fmt.Printf("%-34s %12s %14s %8s\n", title, "MB/s", "peak heap MiB", "target")
	for _, form := range forms {
		r := find(results, prefix+form+"/50MiB")
		if r == nil {
			fmt.Printf("%-34s %12s\n", form, "missing")
			ok = false
			continue
		}
		peak := r.metrics["peak-heap-MiB"]
		mark := "ok"
		if peak >= 50 {
			mark, ok = "MISSED", false
		}
		fmt.Printf("%-34s %12.1f %14.1f %8s\n", form, r.mbps, peak, "<50 "+mark)
	}
	fmt.Println()
	return ok
}

// tracingTable prints a tool call's median and 99th percentile with
// tracing off and on (BenchmarkToolCallTracing, which alternates them);
// the target is that tracing adds less than 5 % to the median.
func tracingTable(w io.Writer, results map[string]*result) bool {
	const title = "tool call, tracing on vs off"
	fmt.Fprintf(w, "%-30s %11s %10s %9s %11s %12s %11s\n", title, "p50 off ms", "p50 on ms", "overhead", "target", "p99 off ms", "p99 on ms")
	r := find(results, "BenchmarkToolCallTracing")
	if r == nil {
		fmt.Fprintf(w, "%-30s %11s\n\n", "tools/call echo", "missing")
		return false
	}
	m := r.metrics
	overhead := (m["on-p50-ms"] - m["off-p50-ms"]) / m["off-p50-ms"] * 100
	ok, mark := true, "ok"
	if !(overhead < 5) { // NaN (no p50 off) misses too
		ok, mark = false, "MISSED"
	}
	fmt.Fprintf(w, "%-30s %11.2f %10.2f %7.1f %% %11s %12.2f %11.2f\n", "tools/call echo", m["off-p50-ms"], m["on-p50-ms"],
		overhead, "<5 % "+mark, m["off-p99-ms"], m["on-p99-ms"])
	fmt.Fprintf(w, "(off and on alternate call by call in one run; on: every span exported over OTLP/HTTP to a\n")
	fmt.Fprintf(w, " collector in the process; figures are the mean over the runs of each run's percentile)\n\n")
	return ok
}

func find(results map[string]*result, suffix string) *result {
	for name, r := range results {
		if strings.HasSuffix(name, suffix) {
			return r
		}
	}
	return nil
}

// parse reads benchmark lines ("BenchmarkX-2  3  123 ns/op  45.6 MB/s  7 unit")
// and averages repeated runs.
func parse(path string) (map[string]*result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	results := map[string]*result{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := fields[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i] // drop the GOMAXPROCS suffix
		}
		r := results[name]
		if r == nil {
			r = &result{metrics: map[string]float64{}}
			results[name] = r
		}
		r.runs++
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			unit := fields[i+1]
			if unit == "MB/s" {
				r.mbps += (v - r.mbps) / float64(r.runs)
			} else {
				r.metrics[unit] += (v - r.metrics[unit]) / float64(r.runs)
			}
		}
	}
	return results, sc.Err()
}
