//go:build !unix

package childproc

import "os/exec"

// prepare leaves cmd as exec.CommandContext made it: the end of its
// context kills the process.
func prepare(*exec.Cmd) {}

// start starts cmd from the calling goroutine.
func start(cmd *exec.Cmd) error { return cmd.Start() }
