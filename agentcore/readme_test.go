package agentcore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEQuotesExample: the agent README.md shows is the one Example
// compiles and runs, so the README's code cannot rot.
func TestREADMEQuotesExample(t *testing.T) {
	src, err := os.ReadFile("example_agent_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok1 := strings.Cut(string(src), "// README snippet start\n")
	snippet, _, ok2 := strings.Cut(rest, "\t// README snippet end\n")
	if !ok1 || !ok2 {
		t.Fatal("example_agent_test.go lost its README snippet start/end lines")
	}
	var lines []string
	for _, l := range strings.SplitAfter(snippet, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	snippet = strings.Join(lines, "")
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+snippet+"```\n") {
		t.Errorf("README.md does not quote the agent of Example (agentcore/example_agent_test.go) as it is; copy it, one tab less, into the README's Go block:\n%s", snippet)
	}
}
