package mcptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// Build compiles the command at pkg (an import path, or a path relative to
// the test's package folder) into dir and returns the binary's path, named
// after the command's folder. With
// race the binary is built with -race, so that a data race makes it exit
// non-zero and fails the graceful-shutdown check of [Agent.Stop]. env is
// added to the go command's environment (e.g. "CGO_ENABLED=0"). Build takes
// no *testing.T so that TestMain can call it once for a whole package.
func Build(dir, pkg string, race bool, env ...string) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	name := filepath.Base(pkg)
	if strings.HasPrefix(pkg, ".") { // a folder: "." or "../cmd/x" is named by where it leads
		if abs, err := filepath.Abs(pkg); err == nil {
			name = filepath.Base(abs)
		}
	}
	out := filepath.Join(dir, name)
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	args = append(args, pkg)
	cmd := exec.Command(goCmd, args...)
	cmd.Env = append(os.Environ(), env...)
	if b, err := procgroup.CombinedOutput(cmd); err != nil {
		return "", fmt.Errorf("%s %s (env %v): %w\n%s", goCmd, strings.Join(args, " "), env, err, b)
	}
	return out, nil
}

// BuildBinary is [Build] into a temporary folder of t; a failed build fails
// the test.
func BuildBinary(t testing.TB, pkg string, race bool, env ...string) string {
	t.Helper()
	bin, err := Build(t.TempDir(), pkg, race, env...)
	if err != nil {
		t.Fatalf("build %s: %v", pkg, err)
	}
	return bin
}

// RaceEnabled reports whether the running test binary was built with -race;
// pass it to [Build] to build the agent the same way.
func RaceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// Main is the body of a TestMain whose tests need binaries built once:
// setup builds them (with [Build]) into a temporary folder, then m's tests
// run, then the folder is removed. It returns the exit code for os.Exit; a
// setup error is printed with name and ends the run with status 1.
func Main(m *testing.M, name string, setup func(dir string) error) int {
	dir, err := os.MkdirTemp("", name+"-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := setup(dir); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	return m.Run()
}
