// Package childproc starts the child processes of an agent (tesseract,
// pdftoppm, a converter) so that none outlives it: every command a package
// linked into an agent runs is made by [Command] and started by [Start] or
// [Run] (internal/tools/archtest fails one that calls exec.Command itself).
//
// On Linux the child gets SIGKILL as its parent-death signal, so it dies
// with the agent however the agent ends — a crash, the OOM killer,
// kill -9 — and it runs in a process group of its own, which the end of its
// context kills whole (grandchildren included). The kernel sends the
// parent-death signal when the thread that started the child exits, not the
// process (syscall.SysProcAttr.Pdeathsig, https://go.dev/issue/27505), and
// the Go runtime ends a thread when a goroutine locked to it returns without
// unlocking it: a child started from such a thread would be killed in the
// middle of its work. So every child is started from one goroutine locked to
// its thread for the life of the process, which never returns: that thread
// ends only with the process. Starts wait for each other there; a start is
// a fork and an exec, a millisecond or so next to the seconds a page
// of OCR takes.
//
// On other Unix systems there is no parent-death signal: the child runs in
// a process group of its own, killed whole when its context ends (the
// agent's shutdown cancels every call), but a child of an agent killed
// outright runs to its end. Elsewhere (Windows, where the agents are not
// supported) the command is exec.CommandContext's.
package childproc

import (
	"context"
	"os/exec"
	"strings"
)

// Command is exec.CommandContext(ctx, name, arg...) set up to die with the
// agent: when ctx ends, its process group is killed (on Unix), and on Linux
// the kernel kills it when the agent dies. The caller sets its environment,
// input, output and WaitDelay as for any exec.Cmd (adding to
// cmd.SysProcAttr, never replacing it), and starts it with [Start] or
// [Run], never with its own Start, Run or Output: only those start it from
// the thread that lives as long as the agent.
func Command(ctx context.Context, name string, arg ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, arg...)
	prepare(cmd)
	return cmd
}

// Start starts cmd, made by [Command], from the thread that lives as long
// as the process, and does not wait for it to end: the caller then calls
// cmd.Wait, as after cmd.Start.
func Start(cmd *exec.Cmd) error {
	return start(cmd)
}

// Run is [Start] then cmd.Wait.
func Run(cmd *exec.Cmd) error {
	if err := Start(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// LastLine is the last line a command wrote to stderr, the one that
// usually names its problem, or err's words when it wrote nothing.
func LastLine(stderr string, err error) string {
	s := strings.TrimSpace(stderr)
	if s == "" {
		return err.Error()
	}
	return strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
}
