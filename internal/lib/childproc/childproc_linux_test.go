package childproc_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/lib/childproc"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// helperEnv names the folder where the helper test (run as a child test
// binary) writes the pid of the child it started; unset, the helper is
// skipped.
const helperEnv = "CHILDPROC_HELPER_DIR"

// family starts a sleep in the background (a grandchild), writes both
// pids into the folder $1, and waits.
const family = `sleep 600 & echo $! > "$1/grandchild"; echo $$ > "$1/child"; wait`

// TestChildDiesWithProcess runs this test binary again as an agent would
// run: the helper test starts a sleep through childproc and blocks. The
// helper's pid alone is then killed with SIGKILL — no shutdown, no signal
// to any group — and the sleep must be gone within seconds.
func TestChildDiesWithProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperStartsChild$", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	if _, err := procgroup.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	child := readPid(t, filepath.Join(dir, "child"), exited)
	t.Cleanup(func() { _ = syscall.Kill(-child, syscall.SIGKILL) })
	if !alive(child) {
		t.Fatalf("the child (pid %d) is not running before its parent is killed", child)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	waitGone(t, "child of a process killed with SIGKILL", child)
}

// TestHelperStartsChild is the child test binary's test: it starts the
// sleep, writes its pid and blocks until killed.
func TestHelperStartsChild(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("run by TestChildDiesWithProcess only")
	}
	cmd := childproc.Command(context.Background(), "sleep", "600")
	if err := childproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	writePid(t, filepath.Join(dir, "child"), cmd.Process.Pid)
	_ = cmd.Wait() // until the test kills this binary
}

// TestThreadExitKeepsChild starts a child from a goroutine locked to its
// thread that returns without unlocking it, which ends the thread: the
// child must live on. A command started by itself from such a thread, with
// the same parent-death signal, is killed: the hazard is real here.
func TestThreadExitKeepsChild(t *testing.T) {
	ours := childproc.Command(t.Context(), "sleep", "600")
	theirs := exec.Command("sleep", "600")
	theirs.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var errOurs, errTheirs error
	onEndingThread(t, func() {
		errOurs = childproc.Start(ours)
		errTheirs = theirs.Start()
	})
	if err := errors.Join(errOurs, errTheirs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-ours.Process.Pid, syscall.SIGKILL)
		_ = syscall.Kill(-theirs.Process.Pid, syscall.SIGKILL)
	})
	waited := make(chan error, 1)
	go func() { waited <- theirs.Wait() }()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("the command started from the ended thread ended with %v, want killed by SIGKILL", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the command started from the ended thread still runs 30 s later: the thread did not end, so this test shows nothing")
	}
	// Ours has had as long to die, and more.
	time.Sleep(200 * time.Millisecond)
	if !alive(ours.Process.Pid) {
		t.Fatal("the child started through childproc died when the thread of the goroutine that asked for it ended")
	}
}

// onEndingThread runs f on a goroutine locked to its thread, which returns
// without unlocking it: the runtime then ends the thread. It does not end
// the process's main thread (it parks it), so a goroutine that finds itself
// there keeps it, until onEndingThread returns, and another one tries.
func onEndingThread(t *testing.T, f func()) {
	t.Helper()
	release := make(chan struct{})
	defer close(release)
	for range 10 {
		ran := make(chan bool)
		go func() {
			runtime.LockOSThread()
			if syscall.Gettid() == os.Getpid() { // the main thread
				ran <- false
				<-release
				runtime.UnlockOSThread()
				return
			}
			f()
			ran <- true
		}() // returns locked: its thread ends
		if <-ran {
			return
		}
	}
	t.Fatal("no goroutine was locked to a thread other than the main one")
}

// TestContextEndKillsGroup checks that the end of the context kills the
// command and what it started in the background.
func TestContextEndKillsGroup(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cmd := childproc.Command(ctx, "/bin/sh", "-c", family, "sh", dir)
	cmd.WaitDelay = 5 * time.Second
	if err := childproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	child := readPid(t, filepath.Join(dir, "child"), waited)
	grandchild := readPid(t, filepath.Join(dir, "grandchild"), waited)
	t.Cleanup(func() { _ = syscall.Kill(-child, syscall.SIGKILL) })
	cancel()
	select {
	case err := <-waited:
		if err == nil {
			t.Error("Wait returned nil for a command killed by its context")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Wait did not return within 30 s of the context's end")
	}
	waitGone(t, "child", child)
	waitGone(t, "grandchild", grandchild)
}

// TestRunKeepsExitStatus checks Run's result: nil for a command that
// succeeded, its exit status for one that failed.
func TestRunKeepsExitStatus(t *testing.T) {
	if err := childproc.Run(childproc.Command(t.Context(), "/bin/sh", "-c", "exit 0")); err != nil {
		t.Errorf("exit 0: %v", err)
	}
	err := childproc.Run(childproc.Command(t.Context(), "/bin/sh", "-c", "exit 3"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("exit 3: got %v", err)
	}
}

// TestStartRefusesOtherCommands checks that a command not made by Command
// is refused, not started without its parent-death signal.
func TestStartRefusesOtherCommands(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := childproc.Start(cmd); err == nil || cmd.Process != nil {
		_ = cmd.Wait()
		t.Fatalf("Start of a command made by exec.Command: %v, want an error and no process", err)
	}
}

// writePid writes pid and a newline to path.
func writePid(t *testing.T, path string, pid int) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// readPid waits up to 30 s for path to hold a pid and a newline, and
// returns it; the command ending first (exited) fails the test.
func readPid(t *testing.T, path string, exited <-chan error) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("the command ended (%v) before writing %s", err, path)
		default:
		}
		b, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return pid
	}
	t.Fatalf("%s was not written within 30 s", path)
	return 0
}

// waitGone waits up to 5 s for pid to be gone (or a zombie: dead, not yet
// reaped by whoever inherited it).
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	t.Errorf("the %s (pid %d) still runs 5 s later", what, pid)
}

// alive reports whether pid is a live process: it exists and is not a
// zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) STATE ...: comm may hold spaces, so read after the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
