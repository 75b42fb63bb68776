package procgroup

import (
	"os/exec"
	"syscall"
)

// setGroup puts cmd in a new process group of its own and has the kernel
// send it SIGKILL when the thread that started it exits, keeping what else
// cmd.SysProcAttr says.
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pgid = true, 0
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
