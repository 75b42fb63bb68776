package mcptest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

const (
	// ReadyTimeout bounds the wait for an agent's /readyz to answer.
	ReadyTimeout = 30 * time.Second
	// ExitTimeout bounds the wait for an agent to exit once asked to stop.
	ExitTimeout = 20 * time.Second
	// logTail is how much of an agent's log a failure message shows.
	logTail = 32 << 10
)

// Agent is an agent process on a free loopback port.
type Agent struct {
	// URL is the agent's base URL, http://127.0.0.1:PORT; it is also its
	// AGENT_PUBLIC_URL.
	URL string
	// Cmd is the command; between [NewAgent] and [Agent.Start] a test may
	// change its arguments, environment, stdin or stdout.
	Cmd *exec.Cmd

	name   string
	group  *procgroup.Group
	logs   *SyncBuffer
	exited chan struct{} // closed once the process has exited
	err    error         // cmd.Wait's result, set before exited is closed
}

// NewAgent prepares bin to run on a free loopback port with a fresh data
// folder, its stdout and stderr going to [Agent.Logs]. Its environment is
// this process's without any AGENT_* setting (so that the developer's shell
// does not change the test), then AGENT_ADDR, AGENT_PUBLIC_URL,
// AGENT_DATA_DIR and AGENT_SHUTDOWN_TIMEOUT=10s, then env, whose settings
// win over those before them.
func NewAgent(t testing.TB, bin string, env ...string) *Agent {
	t.Helper()
	addr := FreeAddr(t)
	a := &Agent{URL: "http://" + addr, name: filepath.Base(bin), logs: &SyncBuffer{}, exited: make(chan struct{})}
	a.Cmd = exec.Command(bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENT_") {
			a.Cmd.Env = append(a.Cmd.Env, kv)
		}
	}
	a.Cmd.Env = append(a.Cmd.Env,
		"AGENT_ADDR="+addr,
		"AGENT_PUBLIC_URL="+a.URL,
		"AGENT_DATA_DIR="+t.TempDir(),
		"AGENT_SHUTDOWN_TIMEOUT=10s",
	)
	a.Cmd.Env = append(a.Cmd.Env, env...)
	a.Cmd.Stdout, a.Cmd.Stderr = a.logs, a.logs
	return a
}

// StartAgent is [NewAgent], [Agent.Start] and [Agent.WaitReady]: an agent
// serving on its port and ready.
func StartAgent(t testing.TB, bin string, env ...string) *Agent {
	t.Helper()
	a := NewAgent(t, bin, env...)
	a.Start(t)
	a.WaitReady(t)
	return a
}

// Exited is closed once the process has exited; ExitErr is then its exit.
func (a *Agent) Exited() <-chan struct{} { return a.exited }

// ExitErr is what waiting for the process gave (nil for exit status 0);
// read it once Exited is closed.
func (a *Agent) ExitErr() error {
	<-a.exited
	return a.err
}

// Start starts the process in a process group of its own (internal/testkit/procgroup).
// When the test ends the group is killed, whatever the agent started with it,
// and if the test failed the agent's log is shown; should the test binary
// die first (its -timeout), the group dies with it.
func (a *Agent) Start(t testing.TB) {
	t.Helper()
	g, err := procgroup.Start(t, a.Cmd)
	if err != nil {
		t.Fatalf("start %s: %v", a.Cmd.Path, err)
	}
	a.group = g
	go func() {
		a.err = a.Cmd.Wait()
		close(a.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-a.exited:
		default:
			a.group.Kill()
			<-a.exited
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", a.name, a.logs.Tail(logTail))
		}
	})
}

// Logs returns what the agent has written so far.
func (a *Agent) Logs() string { return a.logs.String() }

// WaitReady waits until GET /readyz answers 200.
func (a *Agent) WaitReady(t testing.TB) {
	t.Helper()
	a.WaitFor(t, "/readyz", http.StatusOK)
}

// WaitFor polls GET path until it answers status, for at most ReadyTimeout,
// and returns that answer's body. The agent exiting first fails the test.
func (a *Agent) WaitFor(t testing.TB, path string, status int) string {
	t.Helper()
	body, last, ok := poll(a.URL+path, status, a.exited)
	if !ok {
		select {
		case <-a.exited:
			t.Fatalf("%s exited (%v) before %s answered %d; its log:\n%s", a.name, a.err, path, status, a.logs.Tail(logTail))
		default:
		}
		t.Fatalf("%s: %s did not answer %d within %v (last: %s); its log:\n%s", a.name, path, status, ReadyTimeout, last, a.logs.Tail(logTail))
	}
	return body
}

// WaitReady polls GET baseURL/readyz until it answers 200, for at most
// ReadyTimeout: for an agent served in the test's own process.
func WaitReady(t testing.TB, baseURL string) {
	t.Helper()
	if _, last, ok := poll(baseURL+"/readyz", http.StatusOK, nil); !ok {
		t.Fatalf("%s/readyz did not answer 200 within %v (last: %s)", baseURL, ReadyTimeout, last)
	}
}

// poll GETs url until it answers want, ReadyTimeout passes or stop closes.
// It returns the body of the answer wanted, or the last answer seen.
func poll(url string, want int, stop <-chan struct{}) (body, last string, ok bool) {
	hc := &http.Client{Timeout: 2 * time.Second}
	last = "no answer"
	for deadline := time.Now().Add(ReadyTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-stop:
			return "", last, false
		default:
		}
		resp, err := hc.Get(url)
		if err != nil {
			last = err.Error()
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == want {
			return string(b), "", true
		}
		last = fmt.Sprintf("%s: %s", resp.Status, b)
	}
	return "", last, false
}

// Stop sends SIGTERM and checks that the agent shuts down gracefully: it
// exits with status 0 within ExitTimeout. It may be called from a cleanup.
func (a *Agent) Stop(t testing.TB) {
	t.Helper()
	if err := a.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("send SIGTERM to %s: %v", a.name, err)
		return
	}
	a.WaitExit(t, "SIGTERM")
}

// WaitExit waits for the agent to exit after cause (e.g. "stdin closing")
// and checks that it exited with status 0 within ExitTimeout; if it did not
// exit, it is killed.
func (a *Agent) WaitExit(t testing.TB, cause string) {
	t.Helper()
	select {
	case <-a.exited:
	case <-time.After(ExitTimeout):
		a.group.Kill()
		<-a.exited
		t.Errorf("%s did not exit within %v of %s", a.name, ExitTimeout, cause)
		return
	}
	if a.err != nil {
		t.Errorf("%s exited after %s with %v, want status 0", a.name, cause, a.err)
	}
}

// FreeAddr returns a loopback address, 127.0.0.1:PORT, whose port was free
// a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
