package mcptest

import (
	"testing"
	"time"
)

// Kill kills the agent with SIGKILL (kill -9: no shutdown, as in a crash)
// and waits until it is gone.
func (a *Agent) Kill(t testing.TB) {
	t.Helper()
	if err := a.Cmd.Process.Kill(); err != nil {
		t.Errorf("kill %s: %v", a.name, err)
		return
	}
	select {
	case <-a.exited:
	case <-time.After(ExitTimeout):
		t.Errorf("%s did not exit within %v of SIGKILL", a.name, ExitTimeout)
	}
}
