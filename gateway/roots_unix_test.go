//go:build unix

package gateway

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// TestRootsRefuseNamedPipe (E20): a named pipe under a root is refused at
// once, saying what it is; a plain open waited for a writer, and the tool
// call with it, forever.
func TestRootsRefuseNamedPipe(t *testing.T) {
	dir := t.TempDir()
	requiretool.NamedPipe(t, filepath.Join(dir, "pipe.txt"))
	r, err := openRoots([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	done := make(chan error, 1)
	go func() {
		f, err := r.open("pipe.txt")
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "a named pipe, not a regular file") {
			t.Errorf("a named pipe: %v, want a refusal naming it", err)
		}
	case <-time.After(10 * time.Second):
		// Unblock the open so that the test binary can end.
		if f, err := syscall.Open(filepath.Join(dir, "pipe.txt"), syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			syscall.Close(f)
		}
		t.Fatal("opening a named pipe under a root hung for 10 s")
	}
}
