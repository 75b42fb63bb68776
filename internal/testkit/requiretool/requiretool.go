// Package requiretool is how a test says it needs a program from outside
// Go (tesseract, pdftoppm, LibreOffice, versitygw, docker): on a developer's
// machine a missing one skips the test with a message saying what to
// install; with AGENTURA_REQUIRE_TOOLS=1, which CI sets (.ci/run), it fails
// the test instead, so that CI can never pass by skipping.
package requiretool

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// Env is the environment variable that turns a missing tool from a skip
// into a failure: a boolean as strconv.ParseBool reads it ("1", "true");
// empty means false.
const Env = "AGENTURA_REQUIRE_TOOLS"

// Command returns the path of the program name, looked up on PATH. When it
// is not there, the test is skipped, or failed under AGENTURA_REQUIRE_TOOLS=1,
// with a message naming the program and install, how to get it (e.g.
// "apt-get install tesseract-ocr").
func Command(tb testing.TB, name, install string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, fmt.Sprintf("%s is not installed (not found on PATH), and this test needs it: %s (or make deps, which installs every tool the tests need)", name, install))
	}
	return p
}

// Missing ends the test because something from outside Go that it needs is
// not there; msg says what and how to get it. The test is skipped, or
// failed when AGENTURA_REQUIRE_TOOLS is true. Missing does not return.
func Missing(tb testing.TB, msg string) {
	tb.Helper()
	required, err := Required()
	if err != nil {
		tb.Fatalf("%s; and %v", msg, err)
	}
	if required {
		tb.Fatalf("%s (%s=1: a missing tool fails the test)", msg, Env)
	}
	tb.Skipf("%s (skipped; with %s=1, as in CI, this fails)", msg, Env)
}

// Required reports whether AGENTURA_REQUIRE_TOOLS asks for a missing tool
// to fail the test; an unreadable value is an error naming the variable.
func Required() (bool, error) {
	v := os.Getenv(Env)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q is not a boolean: set it to 1 (missing tools fail tests) or 0 (they skip them)", Env, v)
	}
	return b, nil
}
