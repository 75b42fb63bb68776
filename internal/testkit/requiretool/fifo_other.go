//go:build !unix

package requiretool

import "testing"

// NamedPipe makes a named pipe (FIFO) at path for a test of what a program
// does with one. This system has none: the test is skipped, or failed
// under AGENTURA_REQUIRE_TOOLS=1 (Missing).
func NamedPipe(tb testing.TB, path string) {
	tb.Helper()
	Missing(tb, "named pipes (mkfifo) exist on Unix systems only, and this test needs one: run it on Linux or macOS")
}
