// Command benchreport reads `go test -bench` output and prints the project's
// performance targets as a table: signed downloads against http.FileServer
// on the same file, and resolution of a 50 MiB base64 input.
package main

import (
	"bufio"
	"fmt"
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
	fmt.Printf("%-10s %12s %16s %7s %8s %22s %7s\n", "download", "signed MB/s", "FileServer MB/s", "ratio", "target", "FileServer, same bytes", "ratio")
	for _, size := range []string{"4KiB", "256MiB"} {
		s := find(results, "Download/"+size+"/signed")
		b := find(results, "Download/"+size+"/http.FileServer")
		e := find(results, "Download/"+size+"/http.FileServer+same-bytes")
		if s == nil || b == nil || e == nil {
			fmt.Printf("%-10s %12s\n", size, "missing")
			ok = false
			continue
		}
		ratio := s.mbps / b.mbps
		mark := "ok"
		if ratio < 0.9 {
			mark, ok = "MISSED", false
		}
		fmt.Printf("%-10s %12.1f %16.1f %7.2f %8s %22.1f %7.2f\n", size, s.mbps, b.mbps, ratio, "≥0.9 "+mark, e.mbps, s.mbps/e.mbps)
	}
	fmt.Println("(same bytes: http.FileServer answering the signed URL's query with the same security headers;")
	fmt.Println(" against it, only the signed handler's own work differs)")
	fmt.Println()
	fmt.Printf("%-34s %12s %14s %8s\n", "resolve 50 MiB inline input", "MB/s", "peak heap MiB", "target")
	for _, form := range []string{"data-uri", "base64"} {
		r := find(results, "ResolveBase64/"+form+"/50MiB")
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
	if !ok {
		fmt.Println("some targets were missed")
	}
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
