package limitstest

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/mcptest"
)

// metric returns the lines of the agent's /metrics that start with series.
func metric(t testing.TB, a *mcptest.Agent, series string) string {
	t.Helper()
	resp, err := http.Get(a.URL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, series) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// waitFor waits up to 10 s for a line of /metrics to read line.
func waitFor(t testing.TB, a *mcptest.Agent, line string) {
	t.Helper()
	series, _, _ := strings.Cut(line, " ")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if metric(t, a, series) == line {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("metric %q never became %q (last %q)", series, line, metric(t, a, series))
}
