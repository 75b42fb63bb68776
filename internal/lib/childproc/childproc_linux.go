package childproc

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// prepare puts cmd in a process group of its own, with SIGKILL as its
// parent-death signal, keeping what else cmd.SysProcAttr says, and makes the
// end of its context kill the whole group.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = cmp.Or(cmd.SysProcAttr, &syscall.SysProcAttr{})
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pgid = true, 0
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
}

// killGroup sends SIGKILL to the process group pgid; a group already gone
// is os.ErrProcessDone, so that a command that ended before its context
// did keeps its own exit status.
func killGroup(pgid int) error {
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// starter is the goroutine, locked to its thread, that starts every child.
var starter struct {
	once sync.Once
	reqs chan startReq
}

// startReq is a command to start and where the result of its start goes.
type startReq struct {
	cmd  *exec.Cmd
	done chan<- error
}

// start has the starter start cmd, making sure first that it runs.
func start(cmd *exec.Cmd) error {
	starter.once.Do(func() {
		starter.reqs = make(chan startReq)
		go startLoop(starter.reqs)
	})
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig == 0 {
		return fmt.Errorf("childproc: %s was not made by childproc.Command", cmd.Path)
	}
	done := make(chan error, 1)
	starter.reqs <- startReq{cmd: cmd, done: done}
	return <-done
}

// startLoop locks its goroutine to its thread and never unlocks it nor
// returns: no other goroutine runs on this thread, so none can end it, and
// the parent-death signal of the children it starts fires only when the
// process ends.
func startLoop(reqs <-chan startReq) {
	runtime.LockOSThread()
	for r := range reqs {
		r.done <- startOne(r.cmd)
	}
	select {} // not reached: reqs is never closed
}

// startOne starts cmd; a panic in Start is an error, so that the starter
// goes on.
func startOne(cmd *exec.Cmd) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("childproc: start %s: %v", cmd.Path, p)
		}
	}()
	return cmd.Start()
}
