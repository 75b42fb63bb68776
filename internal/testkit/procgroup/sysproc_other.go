//go:build unix && !linux

package procgroup

import (
	"os/exec"
	"syscall"
)

// setGroup puts cmd in a new process group of its own, keeping what else
// cmd.SysProcAttr says; without a parent-death signal here, the guard alone
// kills the group when the test binary dies.
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pgid = true, 0
}
