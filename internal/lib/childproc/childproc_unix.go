//go:build unix && !linux

package childproc

import (
	"cmp"
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// prepare puts cmd in a process group of its own, keeping what else
// cmd.SysProcAttr says, and makes the end of its context kill the whole
// group. There is no parent-death signal here.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = cmp.Or(cmd.SysProcAttr, &syscall.SysProcAttr{})
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pgid = true, 0
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}

// start starts cmd from the calling goroutine: without a parent-death
// signal, no thread matters.
func start(cmd *exec.Cmd) error { return cmd.Start() }
