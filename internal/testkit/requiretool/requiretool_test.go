package requiretool

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder stands in for the test a helper ends: it records how it ended and
// stops the goroutine, as testing.T's Skip and Fatal do.
type recorder struct {
	testing.TB
	ended string // "skip", "fatal" or "" (went on)
	msg   string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.ended, r.msg = "skip", fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.ended, r.msg = "fatal", fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on a goroutine of its own and returns it.
func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

const missing = "agentura-no-such-tool-4f9a"

func TestCommand(t *testing.T) {
	for _, c := range []struct {
		env, wantEnd string
		want         []string
	}{
		{"", "skip", []string{missing + " is not installed", "apt-get install x-tool", "make deps", "skipped; with AGENTURA_REQUIRE_TOOLS=1"}},
		{"0", "skip", []string{missing, "skipped"}},
		{"1", "fatal", []string{missing + " is not installed", "apt-get install x-tool", "AGENTURA_REQUIRE_TOOLS=1: a missing tool fails the test"}},
		{"true", "fatal", []string{missing}},
		{"yes please", "fatal", []string{missing, `AGENTURA_REQUIRE_TOOLS="yes please" is not a boolean`}},
	} {
		t.Run("env="+c.env, func(t *testing.T) {
			t.Setenv(Env, c.env)
			r := run(t, func(tb testing.TB) { Command(tb, missing, "apt-get install x-tool") })
			if r.ended != c.wantEnd {
				t.Fatalf("the test ended by %q (%s), want %q", r.ended, r.msg, c.wantEnd)
			}
			for _, w := range c.want {
				if !strings.Contains(r.msg, w) {
					t.Errorf("message %q lacks %q", r.msg, w)
				}
			}
		})
	}
}

// TestCommandFound: a program on PATH is returned, whatever the variable says.
func TestCommandFound(t *testing.T) {
	t.Setenv(Env, "1")
	var got string
	r := run(t, func(tb testing.TB) { got = Command(tb, "go", "install Go") })
	if r.ended != "" || !strings.HasSuffix(got, "go") && !strings.HasSuffix(got, "go.exe") {
		t.Fatalf("Command(go) = %q, ended by %q (%s); want the go command's path", got, r.ended, r.msg)
	}
}

// TestNamedPipe: a pipe that can be made is made; one that cannot (here: in
// a folder that does not exist) skips the test, or fails it under
// AGENTURA_REQUIRE_TOOLS=1.
func TestNamedPipe(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "pipe")
	if r := run(t, func(tb testing.TB) { NamedPipe(tb, ok) }); runtime.GOOS != "windows" {
		if fi, err := os.Lstat(ok); r.ended != "" || err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Fatalf("NamedPipe: ended by %q (%s), %v; want a named pipe", r.ended, r.msg, err)
		}
	}
	for env, want := range map[string]string{"": "skip", "1": "fatal"} {
		t.Setenv(Env, env)
		r := run(t, func(tb testing.TB) { NamedPipe(tb, filepath.Join(dir, "no", "pipe")) })
		if r.ended != want || !strings.Contains(r.msg, "named pipe") {
			t.Errorf("AGENTURA_REQUIRE_TOOLS=%q, no pipe possible: ended by %q (%s), want %q", env, r.ended, r.msg, want)
		}
	}
}
