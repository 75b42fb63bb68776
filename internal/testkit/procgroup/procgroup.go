// Package procgroup starts the processes of tests so that none outlives its
// test: each command runs in a process group of its own, with SIGKILL as its
// parent-death signal, and beside it a guard (a shell reading a pipe only
// the test binary holds) that kills the whole group the moment the test
// binary is gone, however it went (an ended test, a crash, the -timeout
// panic, SIGKILL). The group, grandchildren included, is also killed when
// the test ends (t.Cleanup) or the command's run is over.
package procgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
)

// guardScript waits for end of file on its standard input, a pipe whose
// other end only the test binary holds, then kills its own process group
// (kill 0), which is the command's.
const guardScript = "read _ ; kill -KILL 0"

// Group is a started command's process group.
type Group struct {
	pgid  int
	guard *os.File // the test binary's end of the guard's pipe
	once  sync.Once
}

// Start starts cmd in a process group of its own, with a parent-death
// signal and a guard that kills the group when the test binary dies, and
// kills the group when tb ends. The caller waits for cmd as usual
// (cmd.Wait), and may kill the group earlier with [Group.Kill].
func Start(tb testing.TB, cmd *exec.Cmd) (*Group, error) {
	tb.Helper()
	g, err := StartGroup(cmd)
	if err != nil {
		return nil, err
	}
	tb.Cleanup(g.Kill)
	return g, nil
}

// StartGroup is [Start] for code without a testing.TB (a TestMain): the
// caller kills the group with [Group.Kill] when done with it; should the
// test binary die first, the guard kills it.
func StartGroup(cmd *exec.Cmd) (*Group, error) {
	Prepare(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g, err := adopt(cmd)
	if err != nil {
		_ = cmd.Wait()
		return nil, err
	}
	return g, nil
}

// Prepare sets cmd up to start in a process group of its own, with the
// parent-death signal, keeping what else cmd.SysProcAttr says: for a command
// that another package starts (an MCP client's stdio transport). Once it has
// started, [Adopt] adds the guard and the cleanup.
func Prepare(cmd *exec.Cmd) { setGroup(cmd) }

// Adopt is the rest of [Start] for a command made with [Prepare] and started
// elsewhere: the guard, and the group killed when tb ends.
func Adopt(tb testing.TB, cmd *exec.Cmd) (*Group, error) {
	tb.Helper()
	if cmd.Process == nil {
		return nil, errors.New("procgroup: Adopt of a command not started")
	}
	g, err := adopt(cmd)
	if err != nil {
		return nil, err
	}
	tb.Cleanup(g.Kill)
	return g, nil
}

// adopt starts the guard of cmd's group; on failure it kills the group.
func adopt(cmd *exec.Cmd) (*Group, error) {
	g := &Group{pgid: cmd.Process.Pid}
	if err := g.startGuard(); err != nil {
		g.Kill()
		return nil, fmt.Errorf("procgroup: start the guard of %s: %w", cmd.Path, err)
	}
	return g, nil
}

// startGuard starts `sh -c guardScript` in the command's group, reading a
// pipe whose write end stays in this process only (close-on-exec).
func (g *Group) startGuard() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	guard := exec.Command("/bin/sh", "-c", guardScript)
	guard.Stdin = r
	guard.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: g.pgid}
	if err := guard.Start(); err != nil {
		w.Close()
		return err
	}
	go guard.Wait() // reaped once the group is killed
	g.guard = w
	return nil
}

// Pid is the process group's id, the command's pid.
func (g *Group) Pid() int { return g.pgid }

// Kill sends SIGKILL to the whole group: the command, whatever it started,
// and the guard. It is safe to call more than once, and after the command
// has exited.
func (g *Group) Kill() {
	g.once.Do(func() {
		_ = syscall.Kill(-g.pgid, syscall.SIGKILL)
		if g.guard != nil {
			g.guard.Close()
		}
	})
}

// Run starts cmd as [StartGroup] does, waits for it, then kills whatever of
// its group is left (a grandchild it did not wait for).
func Run(cmd *exec.Cmd) error {
	g, err := StartGroup(cmd)
	if err != nil {
		return err
	}
	err = cmd.Wait()
	g.Kill()
	return err
}

// Output is exec.Cmd.Output through [Run]: cmd's standard output, and its
// standard error in the *exec.ExitError when it fails (unless cmd.Stderr is
// set).
func Output(cmd *exec.Cmd) ([]byte, error) {
	if cmd.Stdout != nil {
		return nil, errors.New("procgroup: Stdout already set")
	}
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	captured := cmd.Stderr == nil
	if captured {
		cmd.Stderr = &stderr
	}
	err := Run(cmd)
	var ee *exec.ExitError
	if captured && errors.As(err, &ee) {
		ee.Stderr = stderr.Bytes()
	}
	return out.Bytes(), err
}

// CombinedOutput is exec.Cmd.CombinedOutput through [Run]: standard output
// and standard error together.
func CombinedOutput(cmd *exec.Cmd) ([]byte, error) {
	if cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("procgroup: Stdout or Stderr already set")
	}
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := Run(cmd)
	return b.Bytes(), err
}
