//go:build unix

package ocr

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in a process group of its own and makes the context's
// end kill the whole group: a tool that forks (a delegate, a helper) leaves
// nothing running after a cancelled call.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
