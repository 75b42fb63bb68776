package mcptest_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// TestHarness runs the example agent through the whole harness: build,
// start, connect, call, download, stop.
func TestHarness(t *testing.T) {
	bin := mcptest.BuildBinary(t, "github.com/agentura/agentura/examples/fileagent/cmd/fileagent", mcptest.RaceEnabled())
	a := mcptest.StartAgent(t, bin, "AGENT_LOG_LEVEL=debug")
	if !strings.HasPrefix(a.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %q, want a loopback URL", a.URL)
	}
	c, init := mcptest.Connect(t, a.URL+"/mcp")
	if init.ServerInfo.Name != "fileagent" || init.ProtocolVersion != mcptest.Protocol {
		t.Errorf("server %q, protocol %q; want fileagent, %s", init.ServerInfo.Name, init.ProtocolVersion, mcptest.Protocol)
	}
	if n := len(mcptest.ListTools(t, c)); n != 2 {
		t.Errorf("%d tools listed, want 2", n)
	}

	notes := []byte("some notes\n")
	res := mcptest.CallTool(t, c, "archive_files", map[string]any{
		"sources": []any{map[string]any{"name": "notes.txt", "content": base64.StdEncoding.EncodeToString(notes)}},
	})
	mcptest.MustSucceed(t, "archive_files", res)
	files := mcptest.StructuredFiles(t, res)
	if len(files) != 2 || files[0].Filename != "bundle.zip" || !strings.HasPrefix(files[0].DownloadURL, a.URL+"/files/") {
		t.Fatalf("files = %+v, want bundle.zip served by the agent and its sums", files)
	}
	sums := mcptest.Download(t, files[1].DownloadURL)
	if int64(len(sums)) != files[1].SizeBytes || !bytes.Contains(sums, []byte("  notes.txt\n")) {
		t.Errorf("SHA256SUMS = %q (%d bytes, size_bytes %d)", sums, len(sums), files[1].SizeBytes)
	}
	resp, _ := mcptest.Get(t, strings.Replace(files[1].DownloadURL, "token=", "token=x", 1), nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("tampered token: %s, want 403", resp.Status)
	}

	if _, err := mcptest.TryCallTool(c, "no_such_tool", nil); err == nil {
		t.Errorf("calling an unknown tool gave no protocol error")
	}
	if !strings.Contains(a.Logs(), "level=") && !strings.Contains(a.Logs(), `"level"`) {
		t.Errorf("the agent's log holds no log record:\n%s", a.Logs())
	}
	if err := c.Close(); err != nil {
		t.Errorf("close client: %v", err)
	}
	a.Stop(t)
}

// TestWarningsLeavesOutReadinessWaits: a /readyz answered 503 while the agent
// starts is no warning over calls; any other WARN line is.
func TestWarningsLeavesOutReadinessWaits(t *testing.T) {
	log := strings.Join([]string{
		`time=x level=WARN msg=http agent=a method=GET path=/readyz status=503 bytes=111 duration=504ms`,
		`{"level":"WARN","msg":"http","path":"/readyz","status":503}`,
		`time=x level=INFO msg="agent serving"`,
		`time=x level=WARN msg=http agent=a method=POST path=/mcp status=500`,
		`time=x level=WARN msg=http agent=a method=GET path=/readyz status=200 duration=3s`,
	}, "\n")
	got := mcptest.Warnings(log)
	if len(got) != 2 || !strings.Contains(got[0], "path=/mcp") || !strings.Contains(got[1], "status=200") {
		t.Errorf("Warnings = %q; want the /mcp 500 and the slow /readyz 200 only", got)
	}
}
