//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// cli runs the agentura CLI that `make e2e` builds into bin/, with flags
// added to every call and env added to its environment.
type cli struct {
	path  string
	flags []string
	env   []string
}

// agenturaCLI finds bin/agentura; a missing binary fails the test.
func agenturaCLI(t *testing.T, root string) cli {
	t.Helper()
	p := filepath.Join(root, "bin", "agentura")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the agentura CLI is not built at %s (%v): run `make e2e` (or `go build -o bin/ ./cmd/agentura`)", p, err)
	}
	return cli{path: p}
}

// cliResult is the part of `agentura call --output json` the test reads.
type cliResult struct {
	Tool       string         `json:"tool"`
	IsError    bool           `json:"is_error"`
	Text       string         `json:"text"`
	Structured map[string]any `json:"structured_content"`
	Files      []struct {
		Name      string `json:"name"`
		Path      string `json:"path"`
		SizeBytes int64  `json:"size_bytes"`
	} `json:"files"`
}

// saved returns the path (under --out) of the produced file named name.
func (r cliResult) saved(t *testing.T, name string) string {
	t.Helper()
	for _, f := range r.Files {
		if f.Name == name {
			return f.Path
		}
	}
	t.Fatalf("%s saved no %s; it saved %+v", r.Tool, name, r.Files)
	return ""
}

// call runs `agentura call URL TOOL --attach F... --json ARGS --out DIR
// --output json` and decodes its answer into out; a failure fails the test
// with the CLI's stderr.
func (c cli) call(t *testing.T, out *cliResult, url, tool, args, outDir string, attach ...string) {
	t.Helper()
	argv := []string{"call", "--output", "json", "--progress", "never", "--timeout", callTimeout.String(), "--out", outDir, "--json", args}
	argv = append(argv, c.flags...)
	for _, a := range attach {
		argv = append(argv, "--attach", a)
	}
	argv = append(argv, url, tool)
	cmd := exec.CommandContext(t.Context(), c.path, argv...)
	if len(c.env) > 0 {
		cmd.Env = append(os.Environ(), c.env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := procgroup.Run(cmd); err != nil {
		t.Fatalf("agentura %v: %v\nstderr: %s\nstdout: %s", argv, err, stderr.Bytes(), stdout.Bytes())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("agentura %s: output is not JSON (%v): %s", tool, err, stdout.Bytes())
	}
	if out.IsError {
		t.Fatalf("agentura %s: tool error: %s", tool, out.Text)
	}
}
