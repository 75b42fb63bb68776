package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/testagent"
)

// The built binary as a gateway on streamable HTTP (--listen), its agents
// from a YAML configuration file: the example agent over stdio and the
// test agent over HTTP, which share the tool name inspect_file.
func TestGatewayListenWithConfig(t *testing.T) {
	remote := testagent.Start(t, testagent.Options{})
	dir := t.TempDir()
	notes := []byte("notes of the meeting\n")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), notes, 0o644); err != nil {
		t.Fatal(err)
	}
	config := "agents:\n" +
		"  - name: local\n    command: [" + agentBin + ", --stdio]\n    env: [AGENT_DATA_DIR=" + t.TempDir() + "]\n" +
		"  - name: remote\n    url: " + remote.Endpoint + "\n" +
		"roots: [.]\nout: saved\n"
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := mcptest.FreeAddr(t)
	cmd := exec.Command(cliBin, "gateway", "--config", filepath.Join(dir, "gateway.yaml"), "--listen", addr)
	cmd.Dir = t.TempDir() // not the roots: the file's folder is
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	g, err := procgroup.Start(t, cmd)
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			g.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("gateway stderr:\n%s", stderr.String())
		}
	})
	for deadline := time.Now().Add(mcptest.ReadyTimeout); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/mcp")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not listen on %s: %v", addr, err)
		}
	}

	c, _ := mcptest.Connect(t, "http://"+addr+"/mcp")
	var names []string
	for _, tool := range mcptest.ListTools(t, c) {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"local_inspect_file", "remote_inspect_file", "local_archive_files", "list_files", "add_file"} {
		if !slices.Contains(names, want) {
			t.Errorf("tool %s not listed: %v", want, names)
		}
	}
	if slices.Contains(names, "inspect_file") {
		t.Errorf("inspect_file listed unprefixed though both agents have it: %v", names)
	}
	sum := sha256.Sum256(notes)
	for _, tool := range []string{"local_inspect_file", "remote_inspect_file"} {
		res := mcptest.CallTool(t, c, tool, map[string]any{"source": "notes.txt"})
		mcptest.MustSucceed(t, tool, res)
		if text := mcptest.Text(res); !strings.Contains(text, hex.EncodeToString(sum[:])) {
			t.Errorf("%s: %q lacks the file's digest", tool, text)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("gateway exited with %v after SIGTERM, want status 0", waitErr)
		}
	case <-time.After(mcptest.ExitTimeout):
		t.Errorf("gateway did not exit within %v of SIGTERM", mcptest.ExitTimeout)
	}
}

func TestGatewayUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gateway"}, "no agents"},
		{[]string{"gateway", "--listen", "0.0.0.0:8090", "http://127.0.0.1:1/mcp"}, "give a loopback address"},
		{[]string{"gateway", "--config", "/nonexistent.yaml"}, "read the gateway configuration"},
	} {
		r := runCLI(t, t.TempDir(), tc.args...)
		if r.code == exitOK || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: %s\nwant a failure saying %q", tc.args, r, tc.want)
		}
	}
}

// --inline-max 0 and inline_max_bytes: 0 both send every file through
// /uploads; a flag given wins over the file, a flag left alone does not.
func TestGatewayInlineMaxFlagAndFile(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "gw.yaml")
	os.WriteFile(cfgFile, []byte("agents: [{url: http://localhost:8001}]\ninline_max_bytes: 0\n"), 0o600)
	plain := filepath.Join(dir, "plain.yaml")
	os.WriteFile(plain, []byte("agents: [{url: http://localhost:8001}]\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{[]string{"--config", cfgFile}, -1},
		{[]string{"--config", plain}, 0},
		{[]string{"--config", plain, "--inline-max", "0"}, -1},
		{[]string{"--config", cfgFile, "--inline-max", "1MiB"}, 1 << 20},
		{[]string{"--inline-max", "0", "http://localhost:8001/mcp"}, -1},
		{[]string{"http://localhost:8001/mcp"}, 0},
	} {
		cfg, _, err := parseGatewayArgs(tc.args, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if cfg.InlineMaxBytes != tc.want {
			t.Errorf("%v: InlineMaxBytes %d, want %d", tc.args, cfg.InlineMaxBytes, tc.want)
		}
	}
}
