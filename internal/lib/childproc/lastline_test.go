package childproc_test

import (
	"errors"
	"testing"

	"github.com/agentura/agentura/internal/lib/childproc"
)

// TestLastLine: a command's last line of stderr names its problem; trailing
// blank lines and spaces do not count, and with nothing written the error's
// words stand in.
func TestLastLine(t *testing.T) {
	exit := errors.New("exit status 1")
	for _, c := range []struct{ stderr, want string }{
		{"Syntax Error: Couldn't read xref table\nI/O Error: file damaged\n\n", "I/O Error: file damaged"},
		{"  one line only  ", "one line only"},
		{"first\n   last\t\r\n", "last"},
		{"", "exit status 1"},
		{" \n\t\n", "exit status 1"},
	} {
		if got := childproc.LastLine(c.stderr, exit); got != c.want {
			t.Errorf("LastLine(%q) = %q, want %q", c.stderr, got, c.want)
		}
	}
}
