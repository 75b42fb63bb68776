//go:build unix

package requiretool

import (
	"fmt"
	"syscall"
	"testing"
)

// NamedPipe makes a named pipe (FIFO) at path for a test of what a program
// does with one. Where the file system cannot hold one, the test is
// skipped, or failed under AGENTURA_REQUIRE_TOOLS=1 (Missing).
func NamedPipe(tb testing.TB, path string) {
	tb.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		Missing(tb, fmt.Sprintf("cannot make a named pipe at %s (%v), and this test needs one: run it on a file system that holds named pipes (set TMPDIR to one)", path, err))
	}
}
