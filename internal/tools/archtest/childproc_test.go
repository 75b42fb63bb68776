package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// childprocPkg is the package every child process of an agent is started
// through.
const childprocPkg = "github.com/agentura/agentura/internal/lib/childproc"

// agentSide is what agents are made of: agentcore, the agents, their mains
// and the examples; with -deps, go list adds every package of the module
// they link.
var agentSide = []string{"./agentcore/...", "./agents/...", "./cmd/ocr-agent", "./cmd/composer-agent", "./examples/..."}

// processStarts are the functions that start a process, by the path of
// their package.
var processStarts = map[string][]string{
	"os/exec": {"Command", "CommandContext"},
	"os":      {"StartProcess"},
	"syscall": {"ForkExec", "StartProcess", "Exec"},
}

// TestAgentsStartChildrenThroughChildproc fails when a package an agent
// links makes or starts a process itself (exec.Command, os.StartProcess,
// ...) instead of through internal/lib/childproc: such a child would run on
// after its agent is killed. Test helper packages (a name ending in "test")
// and what only they link are the tests' own, under procgroup's rule.
func TestAgentsStartChildrenThroughChildproc(t *testing.T) {
	dir := moduleDir(t)
	// The roots: agentSide's packages but the tests' helpers (agenttest,
	// ocrtest), which link the tests' harnesses.
	cmd := exec.Command("go", append([]string{"list", "-e"}, agentSide...)...)
	cmd.Dir = dir
	out, err := procgroup.Output(cmd)
	if err != nil {
		t.Fatalf("go list: %v", stderrOf(err))
	}
	var roots []string
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasSuffix(path.Base(p), "test") {
			roots = append(roots, p)
		}
	}
	cmd = exec.Command("go", append([]string{"list", "-e", "-deps", "-json=ImportPath,Dir,GoFiles,Module"}, roots...)...)
	cmd.Dir = dir
	out, err = procgroup.Output(cmd)
	if err != nil {
		t.Fatalf("go list: %v", stderrOf(err))
	}
	var seen []string // the calls found in childproc: the scan works
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			ImportPath, Dir string
			GoFiles         []string
			Module          *struct{ Main bool }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("read go list's output: %v", err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		for _, f := range p.GoFiles {
			calls, err := startsIn(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if p.ImportPath == childprocPkg {
				seen = append(seen, calls...)
				continue
			}
			for _, c := range calls {
				t.Errorf("%s starts a process itself (%s): make it with childproc.Command and start it with childproc.Start or Run "+
					"(internal/lib/childproc), so that it dies with the agent", p.ImportPath, c)
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("no exec.Command found in internal/lib/childproc: go list's output or the scan is wrong")
	}
}

// startsIn lists the calls of processStarts in the Go file at file, as
// "file:line: exec.Command".
func startsIn(file string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string][]string{} // the file's name of a package → its functions of processStarts
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		funcs, ok := processStarts[p]
		if !ok {
			continue
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = funcs
	}
	var calls []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok {
			for _, fn := range names[x.Name] {
				if sel.Sel.Name == fn {
					calls = append(calls, fmt.Sprintf("%s: %s.%s", fset.Position(sel.Pos()), x.Name, fn))
				}
			}
		}
		return true
	})
	return calls, nil
}
