package limitstest

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/testagent"
)

// metric returns the lines of the agent's /metrics that start with series.
func metric(t testing.TB, a *mcptest.Agent, series string) string {
	t.Helper()
	return (&testagent.Agent{Base: a.URL}).Metric(t, series)
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

// upload POSTs n bytes to /uploads with the bearer token (none if empty)
// and returns the status and body of the answer.
func upload(t testing.TB, a *mcptest.Agent, token string, n int) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, a.URL+"/uploads", bytes.NewReader(make([]byte, n)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Filename", "blob.bin")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /uploads: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// storedFiles counts the files of area in the store under dataDir.
func storedFiles(t testing.TB, dataDir, area string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(filepath.Join(dataDir, area), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "data" {
			n++
		}
		return nil
	})
	return n
}

// storedTemp counts the entries of the store's temporary folder under
// dataDir (files being added).
func storedTemp(t testing.TB, dataDir string) int {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(dataDir, "tmp"))
	return len(entries)
}
