package gateway_test

// The built `agentura gateway` as a desktop host starts it (the go-sdk's
// CommandTransport, working directory "/"), fronting three built agents
// (examples/fileagent) through their life cycle: one is down at start, one
// crashes and comes back, one stops and comes back. Once with the agents
// served over sessions (protocol_version 2025-11-25 in the configuration),
// once without (2026-07-28, the default).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

func TestGatewayThroughAgentsLifeCycle(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", ""} {
		name := protocol
		if name == "" {
			name = "2026-07-28"
		}
		t.Run(name, func(t *testing.T) { testLifeCycle(t, protocol) })
	}
}

// envValue is the last value of key in cmd's environment.
func envValue(cmd *exec.Cmd, key string) string {
	var v string
	for _, kv := range cmd.Env {
		if val, ok := strings.CutPrefix(kv, key+"="); ok {
			v = val
		}
	}
	return v
}

// again prepares a new process of the agent a was: the same address, URL
// and data folder (so its signing key), as a restart would.
func again(t *testing.T, a *mcptest.Agent) *mcptest.Agent {
	t.Helper()
	n := mcptest.NewAgent(t, fileagentBin,
		"AGENT_ADDR="+envValue(a.Cmd, "AGENT_ADDR"),
		"AGENT_PUBLIC_URL="+a.URL,
		"AGENT_DATA_DIR="+envValue(a.Cmd, "AGENT_DATA_DIR"))
	n.URL = a.URL
	return n
}

func testLifeCycle(t *testing.T, protocol string) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	a := mcptest.StartAgent(t, fileagentBin)
	b := mcptest.StartAgent(t, fileagentBin)
	c := mcptest.NewAgent(t, fileagentBin) // down when the gateway starts

	root, out := t.TempDir(), t.TempDir()
	notes := []byte("notes of the meeting\n")
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), notes, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(notes)
	digest := hex.EncodeToString(sum[:])
	var config strings.Builder
	config.WriteString("agents:\n")
	for _, ag := range []struct {
		name string
		a    *mcptest.Agent
	}{{"a", a}, {"b", b}, {"c", c}} {
		fmt.Fprintf(&config, "  - name: %s\n    url: %s/mcp\n", ag.name, ag.a.URL)
		if protocol != "" {
			fmt.Fprintf(&config, "    protocol_version: %s\n", protocol)
		}
	}
	fmt.Fprintf(&config, "roots: [%s]\nout: %s\n", root, out)
	cfgPath := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(cfgPath, []byte(config.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	// As Claude Desktop starts a stdio server: in "/", no shell.
	cmd := exec.Command(cliBin, "gateway", "--config", cfgPath, "-v")
	cmd.Dir = "/"
	procgroup.Prepare(cmd) // adopted once the transport has started it
	var stderr bytes.Buffer
	var stderrMu sync.Mutex
	cmd.Stderr = lockedWriter{&stderrMu, &stderr}
	t.Cleanup(func() {
		if t.Failed() {
			stderrMu.Lock()
			t.Logf("gateway stderr:\n%s", stderr.String())
			stderrMu.Unlock()
		}
	})
	listChanged := make(chan struct{}, 64)
	hostClient := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case listChanged <- struct{}{}:
			default:
			}
		},
	})
	started := time.Now()
	host, err := hostClient.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: mcptest.ExitTimeout}, nil)
	if err != nil {
		if cmd.Process != nil { // started, then failed: it must not outlive the test
			procgroup.Adopt(t, cmd)
		}
		t.Fatalf("the gateway did not start with agent c down: %v", err)
	}
	if _, err := procgroup.Adopt(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Logf("the gateway answered initialize %v after its start, with c down", time.Since(started).Round(time.Millisecond))
	t.Cleanup(func() { host.Close() })

	tools := func() []string {
		t.Helper()
		var names []string
		for tool, err := range host.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		return names
	}
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v: the gateway must answer with a result", name, err)
		}
		return resultText(res), res.IsError
	}
	inspect := func(agent string) {
		t.Helper()
		text, isErr := call(agent+"_inspect_file", map[string]any{"source": "notes.txt"})
		if isErr || !strings.Contains(text, digest) {
			t.Errorf("%s_inspect_file: is_error %v, %q; want notes.txt's digest", agent, isErr, text)
		}
	}

	want := []string{"a_archive_files", "a_inspect_file", "add_file", "b_archive_files", "b_inspect_file", "list_files"}
	if got := tools(); !slices.Equal(got, want) {
		t.Fatalf("tools with c down: %v, want %v", got, want)
	}
	inspect("a")
	text, isErr := call("b_archive_files", map[string]any{"sources": []any{"notes.txt"}, "name": "minutes"})
	// The host runs in "/": the path it reads must be absolute, under --out.
	m := regexp.MustCompile(`saved as (` + regexp.QuoteMeta(out) + `/[^/]+/minutes\.zip)`).FindStringSubmatch(text)
	if isErr || m == nil {
		t.Fatalf("b_archive_files: is_error %v, %q; want it saved as %s/<run>/minutes.zip", isErr, text, out)
	}
	if zip, err := os.ReadFile(m[1]); err != nil || !bytes.HasPrefix(zip, []byte("PK")) {
		t.Errorf("%s: not the archive: %v", m[1], err)
	}

	// c starts: its tools appear, the host is told, and they work.
	c.Start(t)
	c.WaitReady(t)
	cReady := time.Now()
	for deadline := time.Now().Add(90 * time.Second); !slices.Contains(tools(), "c_inspect_file"); {
		if time.Now().After(deadline) {
			t.Fatalf("c's tools did not appear within 90s of its start: %v", tools())
		}
		select {
		case <-listChanged:
		case <-time.After(2 * time.Second):
		}
	}
	t.Logf("c's tools appeared %v after c was ready", time.Since(cReady).Round(time.Millisecond))
	inspect("c")

	// a crashes and is started again on its address: the next call works.
	a.Kill(t)
	a = again(t, a)
	a.Start(t)
	a.WaitReady(t)
	restarted := time.Now()
	inspect("a")
	t.Logf("the first call after a's restart took %v", time.Since(restarted).Round(time.Millisecond))

	// b stops: a call to its tool is a clear tool error, the gateway goes
	// on; b back, its tools work again.
	b.Stop(t)
	text, isErr = call("b_inspect_file", map[string]any{"source": "notes.txt"})
	if !isErr || !strings.Contains(text, "the agent b is not reachable") || !strings.Contains(text, "Nothing was sent") {
		t.Errorf("a call to b while it is down: is_error %v, %q; want a tool error saying b is not reachable", isErr, text)
	}
	if text, isErr := call("list_files", map[string]any{}); isErr || !strings.Contains(text, "minutes.zip") {
		t.Errorf("list_files with b down: %q", text)
	}
	inspect("c")
	b = again(t, b)
	b.Start(t)
	b.WaitReady(t)
	inspect("b")
	inspect("a")

	// The host goes (closes stdin): the gateway ends, with status 0, before
	// the host would have to signal it.
	closing := time.Now()
	if err := host.Close(); err != nil || time.Since(closing) >= mcptest.ExitTimeout {
		t.Errorf("the gateway ended %v after its host closed stdin, with %v; want status 0 within %v", time.Since(closing), err, mcptest.ExitTimeout)
	}
}
