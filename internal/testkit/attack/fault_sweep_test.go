package attack

import (
	"encoding/json"
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

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// storedAges scans the disk store under data and returns how many files
// its outputs and staging areas hold and how old the oldest is at now (its
// meta.json's created). A file swept between the listing and the read is
// left out.
func storedAges(data string, now time.Time) (files int, oldest time.Duration) {
	for _, area := range []string{"outputs", "staging"} {
		metas, _ := filepath.Glob(filepath.Join(data, area, "*", "*", "meta.json"))
		for _, m := range metas {
			b, err := os.ReadFile(m)
			if err != nil {
				continue
			}
			var meta struct {
				Created time.Time `json:"created"`
			}
			if json.Unmarshal(b, &meta) != nil {
				continue
			}
			files++
			oldest = max(oldest, now.Sub(meta.Created))
		}
	}
	return files, oldest
}

// metricValue finds the sample of /metrics text whose name and labels are
// series ("agentura_sweeps_total{result=\"skipped\"}") and returns its
// value, or -1.
func metricValue(text, series string) float64 {
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// sweepDuration is the duration of a sweep in the agent's log line
// ("cleanup: sweep done ... duration=1.2s").
var sweepDuration = regexp.MustCompile(`msg="cleanup: sweep[^"]*".* duration=(\S+)`)

// Sustained load with 5 s TTLs and a sweep every second, the fault run of
// issue 19 (where one sweep took 37.5 s, 65 were skipped and 2,086 files
// piled up past their TTL): 500 transfers started evenly over 20 s, so that
// files expire all along the load. Every second, and once after the load,
// the data folder is scanned: no file may be older than its TTL plus
// overdueSlack. It logs the longest sweep, how many were skipped, and the
// deepest pile-up it saw.
//
// overdueSlack is generous on purpose: a sweeper that keeps up deletes a
// file at most a scheduled period (1 s) plus one sweep after it expired —
// on the project's machine the oldest file any scan saw was 0.5 s past its
// TTL, the longest sweep 30 ms — but on a saturated 2-core CI machine, under
// -race, sweeps and the scan itself can stall for seconds. 10 s is twice the
// TTL, and a sweeper that deletes fewer files than the load makes (about 33
// a second) falls further behind than that before the load ends: with one
// worker and 50 ms a deletion (the figures) files stayed 16 s past
// their TTL, and the staging area, swept after outputs, not at all.
func TestSweeperKeepsUpUnderLoad(t *testing.T) {
	const (
		n            = 500
		spread       = 20 * time.Second
		ttl          = 5 * time.Second
		overdueSlack = 10 * time.Second
	)
	data := t.TempDir()
	a := mcptest.StartAgent(t, faultagentBinary(t), "AGENT_DATA_DIR="+data, "AGENT_SIGNING_KEY="+signingKey, "AGENT_MCP_STATELESS=true",
		"AGENT_CLEANUP_SCHEDULE=@every 1s", "AGENT_STAGING_TTL=5s", "AGENT_OUTPUT_TTL=5s",
		"AGENT_RATE_LIMIT=0", "AGENT_MAX_CLIENT_CONNECTIONS=0") // 500 transfers from one address: the sweeper, not the rate limit or the connection cap, is under test
	defer a.Stop(t)

	// The monitor scans the store every second while the load runs.
	var (
		mu         sync.Mutex
		peakFiles  int
		oldestSeen time.Duration // the oldest file any scan found
		worstFiles int           // how many files that scan found
	)
	scan := func() {
		files, oldest := storedAges(data, time.Now())
		mu.Lock()
		defer mu.Unlock()
		peakFiles = max(peakFiles, files)
		if oldest > oldestSeen {
			oldestSeen, worstFiles = oldest, files
		}
	}
	stop, monitored := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(monitored)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				scan()
			}
		}
	}()

	var st loadStats
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		time.Sleep(time.Until(start.Add(spread * time.Duration(i) / n)))
		wg.Add(1)
		go func() { defer wg.Done(); st.transfer(a, i) }()
	}
	wg.Wait()
	loadTook := time.Since(start)
	close(stop)
	<-monitored
	files, oldest := storedAges(data, time.Now())

	resp, err := http.Get(a.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	metrics := string(raw)
	var longest time.Duration
	for _, m := range sweepDuration.FindAllStringSubmatch(a.Logs(), -1) {
		if d, err := time.ParseDuration(m[1]); err == nil {
			longest = max(longest, d)
		}
	}
	sweeps := metricValue(metrics, "agentura_sweep_duration_seconds_count")
	overOne := sweeps - metricValue(metrics, `agentura_sweep_duration_seconds_bucket{le="1"}`)
	skipped := metricValue(metrics, `agentura_sweeps_total{result="skipped"}`)
	swept := metricValue(metrics, `agentura_swept_files_total{area="outputs"}`) + metricValue(metrics, `agentura_swept_files_total{area="staging"}`)
	stored := metricValue(metrics, `agentura_files_stored_total{area="outputs"}`) + metricValue(metrics, `agentura_files_stored_total{area="staging"}`)

	t.Logf("%d transfers started over %v, done in %v: %d ok, %d refused cleanly, %d corrupt, %d failed", n, spread,
		loadTook.Round(time.Millisecond), st.ok.Load(), st.refused.Load(), st.corrupt.Load(), st.failed.Load())
	// A sweep still running is in neither the histogram nor the log: a
	// sweeper that fell behind shows as few sweeps and many skipped.
	t.Logf("sweeps: %.0f finished (%.0f over 1 s, longest logged %v, %.3f s in all), %.0f skipped; %.0f of %.0f stored files swept",
		sweeps, overOne, longest.Round(time.Millisecond), metricValue(metrics, "agentura_sweep_duration_seconds_sum"), skipped, swept, stored)
	t.Logf("store during the load: at most %d files; oldest file seen %v old (TTL %v; %d files stored then); after it: %d files, oldest %v",
		peakFiles, oldestSeen.Round(time.Millisecond), ttl, worstFiles, files, oldest.Round(time.Millisecond))

	if st.corrupt.Load() != 0 || st.failed.Load() != 0 {
		t.Errorf("%d corrupt, %d failed: %v", st.corrupt.Load(), st.failed.Load(), st.failures)
	}
	if stored < n {
		t.Errorf("the load stored %.0f files: it proves little (want at least %d)", stored, n)
	}
	if limit := ttl + overdueSlack; oldestSeen > limit || oldest > limit {
		t.Errorf("the sweeper fell behind: a file %v old during the load, %v after it; want none older than %v (TTL %v + %v slack)",
			oldestSeen.Round(time.Millisecond), oldest.Round(time.Millisecond), limit, ttl, overdueSlack)
	}
}
