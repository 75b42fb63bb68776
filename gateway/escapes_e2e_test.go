//go:build unix

package gateway_test

// E19 and E20 (issue 30) on the BUILT gateway binary, driven over stdio as a
// desktop host drives it: a symbolic link inside --out leads nowhere
// outside it, and a named pipe under --root is refused at once.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// startGateway starts the built `agentura gateway` in dir with args after
// "gateway", over stdio, and returns the initialized host session.
func startGateway(t *testing.T, dir string, args ...string) *client.Client {
	t.Helper()
	var stderr bytes.Buffer
	var mu sync.Mutex
	var cmd *exec.Cmd
	tr := transport.NewStdioWithOptions(cliBin, nil, append([]string{"gateway"}, args...),
		transport.WithCommandFunc(func(_ context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd = exec.Command(command, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), env...)
			procgroup.Prepare(cmd)
			return cmd, nil
		}),
		transport.WithCommandStderrWriter(lockedWriter{&mu, &stderr}),
	)
	c := client.NewClient(tr, client.WithProtocolVersion(mcptest.Protocol))
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			t.Logf("gateway stderr:\n%s", stderr.String())
			mu.Unlock()
		}
	})
	// Started and adopted before initialize, so that a gateway that fails
	// to initialize is still closed and killed when the test ends.
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start the gateway: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := procgroup.Adopt(t, cmd); err != nil {
		t.Fatal(err)
	}
	mcptest.Initialize(t, c) // its Start is a no-op now
	return c
}

// linkAgent is an MCP server (go-sdk) whose tool "produce" returns a
// resource_link named as asked, to a file it serves itself: an agent that
// names its outputs as it likes.
func linkAgent(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	s := sdk.NewServer(&sdk.Implementation{Name: "link-agent", Version: "1"}, nil)
	type in struct {
		Name string `json:"name"`
	}
	n := 0
	var mu sync.Mutex
	sdk.AddTool(s, &sdk.Tool{Name: "produce"}, func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		mu.Lock()
		n++
		id := n
		mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.ResourceLink{URI: fmt.Sprintf("%s/files/%d", ts.URL, id), Name: a.Name, MIMEType: "text/plain"},
		}}, nil, nil
	})
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	mux.HandleFunc("/files/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "produced file %s\n", r.URL.Path)
	})
	return ts.URL + "/mcp"
}

// E19: the gateway followed a symbolic link inside --out and wrote outside
// it. Here --out holds links out of it under the names a run's folder may
// take (the run's start second, and -2), and, once the run's folder is
// made, a link "lnk" in it to a folder outside; the agent names its output
// lnk/x.txt (and ../x.txt, /x.txt). Nothing is written outside --out,
// every file the gateway says it saved lies, links resolved, inside --out,
// and a file it could not save is said not to be, with the reason.
func TestGatewayE19SymlinkInOut(t *testing.T) {
	agent := linkAgent(t)
	work, outside := t.TempDir(), t.TempDir()
	out := filepath.Join(work, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Symlink(outside, filepath.Join(out, "lnk"))
	now := time.Now()
	for i := range 120 {
		stamp := now.Add(time.Duration(i) * time.Second).Format("2006-01-02_150405")
		os.Symlink(outside, filepath.Join(out, stamp))
		os.Symlink(outside, filepath.Join(out, stamp+"-2"))
	}
	c := startGateway(t, work, "--root", work, "--out", out, agent)
	realOut, _ := filepath.EvalSymlinks(out)
	inside := func(p string) bool {
		r, err := filepath.EvalSymlinks(p)
		return err == nil && strings.HasPrefix(r, realOut+string(filepath.Separator))
	}

	res := mcptest.CallTool(t, c, "produce", map[string]any{"name": "first.txt"})
	mcptest.MustSucceed(t, "produce", res)
	m := savedAs.FindStringSubmatch(mcptest.Text(res))
	if m == nil || !inside(m[2]) {
		t.Fatalf("first.txt: %q; want it saved inside --out %s", mcptest.Text(res), out)
	}
	run := filepath.Dir(m[2])
	if err := os.Symlink(outside, filepath.Join(run, "lnk")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lnk/x.txt", "../x.txt", "/x.txt", "lnk/../../x.txt"} {
		res := mcptest.CallTool(t, c, "produce", map[string]any{"name": name})
		text := mcptest.Text(res)
		t.Logf("an output named %q: is_error %v, %q", name, res.IsError, text)
		saved := savedAs.FindAllStringSubmatch(text, -1)
		for _, m := range saved {
			if !inside(m[2]) {
				t.Errorf("%s: saved as %s, outside --out %s", name, m[2], out)
			}
		}
		if len(saved) == 0 && !strings.Contains(text, "not saved in --out") {
			t.Errorf("%s: neither saved nor said not to be: %q", name, text)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the gateway wrote outside --out, through a link in it: %v", names)
	}
	if _, err := os.Stat(filepath.Join(work, "x.txt")); err == nil {
		t.Error("the gateway wrote x.txt beside --out")
	}
}

// E20: the gateway hung forever on a named pipe under --root. Given as a
// tool's file input it is refused with a clear error within 5 s, and the
// gateway answers the next call.
func TestGatewayE20NamedPipeInput(t *testing.T) {
	root := t.TempDir()
	pipe := filepath.Join(root, "pipe.txt")
	requiretool.NamedPipe(t, pipe)
	t.Cleanup(func() {
		// Should the gateway hang on the pipe, a writer frees it.
		if fd, err := syscall.Open(pipe, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			syscall.Close(fd)
		}
	})
	if err := os.WriteFile(filepath.Join(root, "ok.txt"), []byte("a plain file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := mcptest.StartAgent(t, fileagentBin)
	c := startGateway(t, root, "--root", root, "--out", filepath.Join(t.TempDir(), "out"), agent.URL+"/mcp")
	mcptest.MustSucceed(t, "inspect_file ok.txt", mcptest.CallTool(t, c, "inspect_file", map[string]any{"source": "ok.txt"}))

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = "inspect_file"
	req.Params.Arguments = map[string]any{"source": "pipe.txt"}
	began := time.Now()
	res, err := c.CallTool(ctx, req)
	took := time.Since(began)
	if err != nil {
		t.Fatalf("inspect_file of a named pipe: no answer after %v: %v", took.Round(time.Millisecond), err)
	}
	text := mcptest.Text(res)
	t.Logf("a named pipe as a file input: answered in %v: is_error %v, %q", took.Round(time.Millisecond), res.IsError, text)
	if !res.IsError || !strings.Contains(text, "named pipe") || !strings.Contains(text, "pipe.txt") {
		t.Errorf("want a tool error naming pipe.txt as a named pipe")
	}
	if took > 5*time.Second { // a hang would take the call's whole 15 s
		t.Errorf("answered after %v; want within 5 s", took.Round(time.Millisecond))
	}
	mcptest.MustSucceed(t, "inspect_file after the pipe", mcptest.CallTool(t, c, "inspect_file", map[string]any{"source": "ok.txt"}))
}
