package contractcheck_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/contractcheck"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// The built agents TestMain makes.
var fileagentBin, composerBin string

func TestMain(m *testing.M) {
	os.Exit(mcptest.Main(m, "contractcheck", func(dir string) (err error) {
		race := mcptest.RaceEnabled()
		if fileagentBin, err = mcptest.Build(dir, "../examples/fileagent/cmd/fileagent", race); err != nil {
			return err
		}
		composerBin, err = mcptest.Build(dir, "../cmd/composer-agent", race)
		return err
	}))
}

// statuses maps each point of a report to its status.
func statuses(r *contractcheck.Report) map[string]contractcheck.Status {
	m := map[string]contractcheck.Status{}
	for _, p := range r.Points {
		m[p.ID] = p.Status
	}
	return m
}

// allPoints are the points every complete check reports, in order.
var allPoints = []string{
	contractcheck.PointConnect, contractcheck.PointTools, contractcheck.PointFileParams, contractcheck.PointMCPFile,
	contractcheck.PointInline, contractcheck.PointUploads, contractcheck.PointURL, contractcheck.PointOutputFields,
	contractcheck.PointOutputLinks, contractcheck.PointDownload, contractcheck.PointHeaders, contractcheck.PointToken,
	contractcheck.PointFileTransfer,
}

// mustMeet fails the test unless r passes every point but the optional
// ones named, which must be "not offered".
func mustMeet(t *testing.T, r *contractcheck.Report, notOffered ...string) {
	t.Helper()
	var text bytes.Buffer
	r.WriteText(&text)
	var ids []string
	for _, p := range r.Points {
		ids = append(ids, p.ID)
		want := contractcheck.Pass
		if slices.Contains(notOffered, p.ID) {
			want = contractcheck.NotOffered
		}
		if p.Status != want {
			t.Errorf("%s: %s, want %s: %s", p.ID, p.Status, want, p.Detail)
		}
	}
	if !slices.Equal(ids, allPoints) {
		t.Errorf("points %v, want %v", ids, allPoints)
	}
	// The last line says what is true: how many passed, and which optional
	// points were not offered, never that all passed when some were not.
	summary := fmt.Sprintf("\n%d points: %d passed, 0 failed\n", len(allPoints), len(allPoints)-len(notOffered))
	if len(notOffered) > 0 {
		summary = fmt.Sprintf("\n%d points: %d passed, 0 failed, %d not offered (optional)\n", len(allPoints), len(allPoints)-len(notOffered), len(notOffered))
	}
	if !strings.HasSuffix(text.String(), summary) {
		t.Errorf("the report does not end in %q", summary)
	}
	if t.Failed() {
		t.Logf("the report:\n%s", text.String())
	}
}

// Our agents meet the contract: the example agent (its archive, several
// files with a sub-folder) and the composer (a picture it asks for in an
// embed's content, the file field of an array of objects), over HTTP at
// the newest revision; the example agent over stdio too, its uploads and
// downloads at the base URL given.
func TestOurAgentsMeetTheContract(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Run("fileagent", func(t *testing.T) {
		a := mcptest.StartAgent(t, fileagentBin)
		r := contractcheck.Run(ctx, contractcheck.Target{URL: a.URL + "/mcp"}, contractcheck.Options{})
		mustMeet(t, r)
		if r.Tool != "archive_files" || r.Protocol != "2026-07-28" {
			t.Errorf("called %s over %s, want archive_files (it produces files) over 2026-07-28", r.Tool, r.Protocol)
		}
	})
	t.Run("composer", func(t *testing.T) {
		a := mcptest.StartAgent(t, composerBin)
		r := contractcheck.Run(ctx, contractcheck.Target{URL: a.URL + "/mcp"}, contractcheck.Options{})
		mustMeet(t, r)
		if r.Tool != "compose_document" || r.Parameter != "embeds[].content" || !strings.Contains(r.Sample, "image/png") {
			t.Errorf("called %s with %s as %s; want compose_document with a PNG as embeds[].content", r.Tool, r.Sample, r.Parameter)
		}
	})
	t.Run("fileagent over stdio", func(t *testing.T) {
		addr := mcptest.FreeAddr(t)
		r := contractcheck.Run(ctx, contractcheck.Target{
			Command: []string{fileagentBin, "--stdio"},
			Env:     []string{"AGENT_ADDR=" + addr, "AGENT_PUBLIC_URL=http://" + addr, "AGENT_DATA_DIR=" + t.TempDir()},
			BaseURL: "http://" + addr,
		}, contractcheck.Options{Tool: "archive_files", Arguments: map[string]any{"name": "checked"}})
		mustMeet(t, r)
		if p, _ := r.Point(contractcheck.PointOutputFields); !strings.Contains(p.Detail, "checked.zip") {
			t.Errorf("the arguments given were not used: %s", p.Detail)
		}
	})
}

// pythonServer starts testdata/contract_server.py (Debian's python3, the
// standard library alone) with the points in breaks broken, and returns its
// MCP URL.
func pythonServer(t *testing.T, breaks string) string {
	t.Helper()
	py := requiretool.Command(t, "python3", "apt-get install python3 (.ci/apt.d/core.txt)")
	cmd := exec.Command(py, "testdata/contract_server.py", "--port", "0", "--break", breaks)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g, err := procgroup.Start(t, cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("contract_server.py stderr:\n%s", stderr.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		u, ok := strings.CutPrefix(strings.TrimSpace(s), "serving MCP at ")
		if !ok {
			t.Fatalf("contract_server.py said %q; stderr:\n%s", s, stderr.String())
		}
		return u
	case <-time.After(mcptest.ReadyTimeout):
		t.Fatalf("contract_server.py did not start within %v", mcptest.ReadyTimeout)
	}
	return ""
}

// A server written in Python from docs/contract.md alone meets the
// contract; it has no /uploads (the file by URL is served by the check)
// and no file-transfer methods, which are optional.
func TestPythonServerMeetsTheContract(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := contractcheck.Run(ctx, contractcheck.Target{URL: pythonServer(t, "")}, contractcheck.Options{})
	mustMeet(t, r, contractcheck.PointUploads, contractcheck.PointFileTransfer)
	if r.Protocol != "2025-11-25" || r.Server != "py-contract-server 1" {
		t.Errorf("server %q over %q, want py-contract-server over 2025-11-25 (it answers only initialize)", r.Server, r.Protocol)
	}
}

// The same server broken in one point at a time: the check fails that
// point, by its name, and no other; its detail says what is wrong.
func TestBrokenServerPointsNamed(t *testing.T) {
	for _, tc := range []struct {
		broken, point, detail string
	}{
		{"markers", contractcheck.PointFileParams, "no tool marks a parameter"},
		{"mcp-file-object", contractcheck.PointMCPFile, "maxSize is \"ten megabytes\""},
		{"inline", contractcheck.PointInline, "data: URIs are not accepted"},
		{"url", contractcheck.PointURL, "URLs are not fetched"},
		{"fields", contractcheck.PointOutputFields, "sha256"},
		{"links", contractcheck.PointOutputLinks, "no resource_link"},
		{"size", contractcheck.PointDownload, "announced 48"},
		{"digest", contractcheck.PointDownload, "sha256"},
		{"headers", contractcheck.PointHeaders, "attachment"},
		{"token", contractcheck.PointToken, "served without a valid token"},
	} {
		t.Run(tc.broken, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			r := contractcheck.Run(ctx, contractcheck.Target{URL: pythonServer(t, tc.broken)}, contractcheck.Options{})
			var text bytes.Buffer
			r.WriteText(&text)
			if failed := r.Failed(); !slices.Equal(failed, []string{tc.point}) {
				t.Errorf("failed %v, want [%s] alone\n%s", failed, tc.point, text.String())
			}
			if p, _ := r.Point(tc.point); !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("%s: detail %q lacks %q", tc.point, p.Detail, tc.detail)
			}
			raw, _ := json.Marshal(r)
			var back contractcheck.Report
			if err := json.Unmarshal(raw, &back); err != nil || statuses(&back)[tc.point] != contractcheck.Fail {
				t.Errorf("the JSON report does not carry the failure: %s", raw)
			}
		})
	}
}
