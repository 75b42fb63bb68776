package procgroup_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// helperEnv names the folder where the helper test (run as a child test
// binary) writes the pids of what it started; unset, the helper is skipped.
const helperEnv = "PROCGROUP_HELPER_DIR"

// family is the script the tests start: a shell that starts a sleep in the
// background (a grandchild of the test binary), writes both pids, and waits.
const family = `sleep 600 & echo $! > "$1/grandchild"; echo $$ > "$1/child"; wait`

// TestTimedOutTestLeavesNoProcess runs this test binary again with a short
// -test.timeout on a helper test that starts a shell which starts a sleep,
// then blocks: the child test binary dies of its timeout without running any
// cleanup, and the shell and the sleep must die with it.
func TestTimedOutTestLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBlocksUntilTimeout$", "-test.timeout=5s", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := procgroup.CombinedOutput(cmd)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !strings.Contains(string(out), "test timed out") {
		t.Fatalf("the helper test binary should have died of its -test.timeout; got %v:\n%s", err, out)
	}
	for _, name := range []string{"child", "grandchild"} {
		pid := readPid(t, filepath.Join(dir, name))
		waitGone(t, name, pid)
	}
}

// TestHelperBlocksUntilTimeout is the child test binary's test: it starts
// the family and blocks until the binary's -test.timeout kills it.
func TestHelperBlocksUntilTimeout(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("run by TestTimedOutTestLeavesNoProcess only")
	}
	cmd := exec.Command("/bin/sh", "-c", family, "sh", dir)
	if _, err := procgroup.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "grandchild"))
	waitFile(t, filepath.Join(dir, "child"))
	select {} // the -test.timeout ends this
}

// TestCleanupKillsGroup checks that the end of a test kills the command and
// what it started in the background.
func TestCleanupKillsGroup(t *testing.T) {
	dir := t.TempDir()
	t.Run("start", func(t *testing.T) {
		cmd := exec.Command("/bin/sh", "-c", family, "sh", dir)
		if _, err := procgroup.Start(t, cmd); err != nil {
			t.Fatal(err)
		}
		go cmd.Wait()
		waitFile(t, filepath.Join(dir, "grandchild"))
		waitFile(t, filepath.Join(dir, "child"))
	})
	waitGone(t, "child", readPid(t, filepath.Join(dir, "child")))
	waitGone(t, "grandchild", readPid(t, filepath.Join(dir, "grandchild")))
}

// TestRunKillsLeftovers checks that Run kills a background process its
// command left behind when it exited.
func TestRunKillsLeftovers(t *testing.T) {
	dir := t.TempDir()
	// The sleep's output goes elsewhere, so that Wait does not wait for it.
	cmd := exec.Command("/bin/sh", "-c", `sleep 600 >/dev/null 2>&1 & echo $! > "$1/grandchild"`, "sh", dir)
	if out, err := procgroup.CombinedOutput(cmd); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	waitGone(t, "grandchild", readPid(t, filepath.Join(dir, "grandchild")))
}

// waitFile waits up to 10 s for path to hold a line.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return
		}
	}
	t.Fatalf("%s was not written within 10s", path)
}

// readPid reads the pid written in path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the helper did not write its pids: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pid
}

// waitGone waits up to 10 s for pid to be gone (or a zombie, dead and not
// yet reaped by whoever inherited it).
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	t.Errorf("the %s (pid %d) still runs after its test ended", what, pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// alive reports whether pid is a live process: it exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) // no /proc: trust kill
	}
	// pid (comm) STATE ...: comm may hold spaces, so read after the last ')'.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
