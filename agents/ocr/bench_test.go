//go:build unix

package ocr_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// benchPage is the text of page n of the benchmark document: fifteen lines
// of words, different on every page.
func benchPage(n int) []string {
	words := []string{"invoice", "delivery", "payment", "customer", "account", "balance", "shipment",
		"quantity", "address", "contract", "receipt", "service", "product", "order", "total"}
	lines := []string{fmt.Sprintf("Page %d of the benchmark document", n)}
	for l := range 14 {
		line := fmt.Sprintf("Line %d:", l+1)
		for w := range 6 {
			line += " " + words[(n*7+l*3+w)%len(words)]
		}
		lines = append(lines, line)
	}
	return lines
}

// The shell baselines: the same commands the agent runs, with the same
// settings, on the same pages. OMP_THREAD_LIMIT=1 is what the agent sets too.
const (
	// shellLoop rasterises, then runs tesseract once per page.
	shellLoop = `pdftoppm -r 300 -png in.pdf p && for f in p-*.png; do tesseract "$f" "${f%.png}" -l eng txt 2>/dev/null; done`
	// shellList rasterises, then runs one tesseract over the list of pages:
	// the sequential way, which the agent took before it spread a PDF's
	// pages over the engine.
	shellList = `pdftoppm -r 300 -png in.pdf p && ls p-*.png > pages.txt && tesseract pages.txt out --dpi 300 -l eng txt 2>/dev/null`
)

// BenchmarkPDF10 reads a scanned 10-page PDF through the agent
// (ocr_document, from base64 arguments to stored result; its pages spread
// over AGENT_OCR_CONCURRENCY engine processes, by default one per CPU) and
// with the plain commands in a shell, one after another, in turn, and
// reports the pages per second of each, the agent's speed-up over the loop
// (the target: at least 1.8 on two cores) and its CPU overhead. Run it with make bench-ocr (-benchtime 3x: the
// best of three runs of each).
func BenchmarkPDF10(b *testing.B) {
	const pages = 10
	var content [][]string
	for n := range pages {
		content = append(content, benchPage(n+1))
	}
	pdf := ocrtest.PDF(b, content...)
	svc, _ := newService(b, ocr.Config{})
	args := map[string]any{"source": attachment("bench.pdf", pdf)}

	var agent, loop, list cost
	for b.Loop() {
		agent.add(measure(func() {
			res, err := invoke(b, svc, "ocr_document", args)
			if err != nil {
				b.Fatalf("ocr_document: %v", err)
			}
			if n := len(res.Structured()["pages"].([]ocr.Page)); n != pages {
				b.Fatalf("the agent read %d pages, want %d", n, pages)
			}
		}))
		loop.add(measure(func() { runShell(b, shellLoop, pdf) }))
		list.add(measure(func() { runShell(b, shellList, pdf) }))
	}
	for _, r := range []struct {
		name string
		c    cost
	}{{"agent", agent}, {"shell-loop", loop}, {"shell-list", list}} {
		b.ReportMetric(pages/r.c.best.Seconds(), r.name+"-pages/s")
		b.ReportMetric(r.c.cpu.Seconds()/float64(pages*b.N), r.name+"-cpu-s/page")
	}
	// On a shared machine wall time swings with the neighbours' load: the
	// best of the runs is the steadier wall figure, and CPU time (the
	// agent's own and its children's) the steadier measure of work added.
	b.ReportMetric(loop.best.Seconds()/agent.best.Seconds(), "speedup-vs-loop")
	b.ReportMetric(float64(runtime.NumCPU()), "cpus")
	b.ReportMetric(100*(agent.cpu.Seconds()/loop.cpu.Seconds()-1), "cpu-overhead-vs-loop-%")
	b.ReportMetric(100*(agent.cpu.Seconds()/list.cpu.Seconds()-1), "cpu-overhead-vs-list-%")
	// The agent's own share of its CPU time: what the test process (the
	// agent in process: decoding the input, the checks, joining the pages,
	// the response) used, against that and its commands together. Unlike
	// the wall-time comparisons, the neighbours' load hardly moves it.
	b.ReportMetric(100*agent.self.Seconds()/agent.cpu.Seconds(), "agent-own-cpu-%")
	reportLoad(b)
}

// reportLoad reports the one-minute load average, so that a reader can
// tell a quiet machine's numbers from a busy one's.
func reportLoad(b *testing.B) {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	var load float64
	if _, err := fmt.Sscan(string(raw), &load); err == nil {
		b.ReportMetric(load, "load-avg")
	}
}

// cost is what runs of some work cost: the best (shortest) and the total
// wall time of a run, the total CPU time (this process's and its waited-for
// children's, user and system), and this process's part of it.
type cost struct{ best, total, cpu, self time.Duration }

func (c *cost) add(d cost) {
	if c.best == 0 || d.best < c.best {
		c.best = d.best
	}
	c.total += d.total
	c.cpu += d.cpu
	c.self += d.self
}

// measure runs fn once and returns what it cost.
func measure(fn func()) cost {
	self0, children0, start := cpuTime(syscall.RUSAGE_SELF), cpuTime(syscall.RUSAGE_CHILDREN), time.Now()
	fn()
	wall := time.Since(start)
	self := cpuTime(syscall.RUSAGE_SELF) - self0
	return cost{best: wall, total: wall, cpu: self + cpuTime(syscall.RUSAGE_CHILDREN) - children0, self: self}
}

// cpuTime is the CPU time used so far by this process (RUSAGE_SELF) or its
// waited-for children (RUSAGE_CHILDREN).
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runShell runs script with sh in a fresh folder holding in.pdf.
func runShell(b *testing.B, script string, pdf []byte) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.pdf"), pdf, 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := procgroup.Run(cmd); err != nil {
		b.Fatalf("sh -c %q: %v: %s", script, err, stderr.String())
	}
}

// BenchmarkBatch reads eight one-page scans with ocr_batch, in turn with one
// engine process at a time and with two, and reports the speed-up: what
// parallel processes buy on a two-core machine.
func BenchmarkBatch(b *testing.B) {
	const n = 8
	var sources []any
	for i := range n {
		sources = append(sources, attachment(fmt.Sprintf("scan%d.png", i+1), ocrtest.PNG(b, ocrtest.Render(b, benchPage(i+1)...))))
	}
	args := map[string]any{"sources": sources}
	serial, _ := newService(b, ocr.Config{Concurrency: 1})
	parallel, _ := newService(b, ocr.Config{Concurrency: 2})
	run := func(svc *agentcore.Service) cost {
		return measure(func() {
			res, err := invoke(b, svc, "ocr_batch", args)
			if err != nil || res.Structured()["succeeded"] != n {
				b.Fatalf("ocr_batch: %v", err)
			}
		})
	}
	var one, two cost
	for b.Loop() {
		one.add(run(serial))
		two.add(run(parallel))
	}
	// Wall time is the point here (the CPU time is the same either way),
	// the best run of each, as the neighbours' load swings.
	b.ReportMetric(n/one.best.Seconds(), "1-process-pages/s")
	b.ReportMetric(n/two.best.Seconds(), "2-process-pages/s")
	b.ReportMetric(one.best.Seconds()/two.best.Seconds(), "speedup")
	reportLoad(b)
}
