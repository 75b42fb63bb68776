package ocr_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
)

// children returns the process ids of this process's children running the
// command name, read from /proc.
func children(t *testing.T, name string) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if s[open+1:end] != name || len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
		pids = append(pids, pid)
	}
	return pids
}

// multiPagePDF is a PDF with enough pages to keep tesseract busy for a
// moment.
func multiPagePDF(t *testing.T, pages int) []byte {
	t.Helper()
	var content [][]string
	for range pages {
		content = append(content, sampleLines)
	}
	return ocrtest.PDF(t, content...)
}

// TestCancelKillsTesseract cancels a call while tesseract runs: the call
// returns the context's error and the process is gone.
func TestCancelKillsTesseract(t *testing.T) {
	svc, _ := newService(t, ocr.Config{})
	raw, _ := json.Marshal(map[string]any{"source": attachment("long.pdf", multiPagePDF(t, 6))})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := svc.Invoke(ctx, "ocr_document", "", raw)
		done <- err
	}()

	var pids []int
	deadline := time.After(60 * time.Second)
	for len(pids) == 0 {
		select {
		case err := <-done:
			t.Fatalf("the call ended (%v) before tesseract was seen running", err)
		case <-deadline:
			t.Fatal("tesseract did not start within 60s")
		case <-time.After(5 * time.Millisecond):
		}
		pids = children(t, "tesseract")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call returned %v, want an error wrapping context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not return within 30s of being cancelled")
	}
	for _, pid := range pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("tesseract (pid %d) still exists after the call was cancelled", pid)
		}
	}
}

// TestTimeout: a document that takes longer than Config.Timeout is stopped,
// and the error names the setting.
func TestTimeout(t *testing.T) {
	svc, _ := newService(t, ocr.Config{Timeout: 300 * time.Millisecond})
	_, err := invoke(t, svc, "ocr_document", map[string]any{"source": attachment("long.pdf", multiPagePDF(t, 6))})
	if err == nil || !strings.Contains(err.Error(), "AGENT_OCR_TIMEOUT") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v; want one naming AGENT_OCR_TIMEOUT and wrapping context.DeadlineExceeded", err)
	}
}

// TestConcurrencyLimit runs two batches of two images side by side with a
// limit of one engine process: there is never more than one tesseract at a
// time (each runs for hundreds of milliseconds at least, so a look every 10 ms sees any
// overlap; a tighter loop only takes CPU from the tesseract it watches).
func TestConcurrencyLimit(t *testing.T) {
	svc, _ := newService(t, ocr.Config{Concurrency: 1})
	png := ocrtest.PNG(t, ocrtest.Render(t, sampleLines...))
	sources := []any{attachment("a.png", png), attachment("b.png", png)}

	stop := make(chan struct{})
	most := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				most <- n
				return
			case <-time.After(10 * time.Millisecond):
				n = max(n, len(children(t, "tesseract")))
			}
		}
	}()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := invoke(t, svc, "ocr_batch", map[string]any{"sources": sources}); err != nil {
				t.Errorf("ocr_batch: %v", err)
			}
		})
	}
	wg.Wait()
	close(stop)
	if n := <-most; n != 1 {
		t.Errorf("at most %d tesseract processes were seen at once; want exactly 1 (the limit, reached)", n)
	}
}

// TestReadiness: /readyz fails, naming what to install, while tesseract or
// pdftoppm is missing, and passes when both are there.
func TestReadiness(t *testing.T) {
	_, srv := newService(t, ocr.Config{Tesseract: "/nonexistent/tesseract", PDFToPPM: "/nonexistent/pdftoppm"})
	body, status := readyz(t, srv.URL)
	if status != http.StatusServiceUnavailable {
		t.Errorf("/readyz without the commands: %d, want 503", status)
	}
	for _, w := range []string{"tesseract", "apt-get install tesseract-ocr", "pdftoppm", "poppler-utils"} {
		if !strings.Contains(body, w) {
			t.Errorf("/readyz body %q does not say %q", body, w)
		}
	}

	_, srv = newService(t, ocr.Config{})
	if body, status := readyz(t, srv.URL); status != http.StatusOK {
		t.Errorf("/readyz with the commands installed: %d %s, want 200", status, body)
	}
}

// readyz is the agent's /readyz answer once its first readiness checks
// have run (they run in the background from the start: on a busy machine
// the first answers may say they are still running).
func readyz(t *testing.T, base string) (string, int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		body, status := get(t, base+"/readyz")
		if !strings.Contains(body, "still running") || time.Now().After(deadline) {
			return body, status
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func get(t *testing.T, url string) (string, int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	return b.String(), resp.StatusCode
}

// TestMetrics: a call shows in the agent's metrics at /metrics.
func TestMetrics(t *testing.T) {
	svc, srv := newService(t, ocr.Config{})
	png := ocrtest.PNG(t, ocrtest.Render(t, sampleLines...))
	if _, err := invoke(t, svc, "ocr_document", map[string]any{"source": attachment("scan.png", png)}); err != nil {
		t.Fatalf("ocr_document: %v", err)
	}
	body, _ := get(t, srv.URL+"/metrics")
	for _, w := range []string{
		`(?m)^agentura_ocr_pages_total 1$`,
		// tesseract ran to list the languages, then to read.
		`(?m)^agentura_ocr_command_seconds_count\{command="tesseract",outcome="ok"\} [2-9]$`,
		`(?m)^agentura_ocr_running 0$`,
		`(?m)^agentura_ocr_waiting 0$`,
	} {
		if !regexp.MustCompile(w).MatchString(body) {
			t.Errorf("/metrics has no line matching %s", w)
		}
	}
	if err := ocr.New(ocr.Config{}).Register(svc); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("a second agent on the same service: %v; want an error", err)
	}
}
