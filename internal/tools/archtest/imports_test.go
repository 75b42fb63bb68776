package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath string
	Imports    []string
	Error      *struct{ Err string }
}

// modulePackages lists the module's packages with their imports, through
// the go command (standard library only), as module-relative paths.
func modulePackages(t *testing.T) map[string][]string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH, and this test asks it for the import graph: %v", err)
	}
	out, err := procgroup.Output(exec.Command(goCmd, "list", "-m", "-f", "{{.Path}} {{.Dir}}"))
	if err != nil {
		t.Fatalf("go list -m: %v", stderrOf(err))
	}
	mod, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	cmd := exec.Command(goCmd, "list", "-e", "-json=ImportPath,Imports,Error", "./...")
	cmd.Dir = dir
	out, err = procgroup.Output(cmd)
	if err != nil {
		t.Fatalf("go list ./... in %s: %v", dir, stderrOf(err))
	}
	rel := func(p string) (string, bool) {
		if p == mod {
			return ".", true
		}
		return strings.CutPrefix(p, mod+"/")
	}
	pkgs := map[string][]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("read go list's output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		name, _ := rel(p.ImportPath)
		var internal []string
		for _, imp := range p.Imports {
			if r, ok := rel(imp); ok {
				internal = append(internal, r)
			}
		}
		pkgs[name] = internal
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list ./... in %s listed no package", dir)
	}
	return pkgs
}

// stderrOf adds the go command's standard error to err.
func stderrOf(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return errors.New(err.Error() + ": " + strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}

// TestImportDirection fails when a package of the module imports one of the
// module that its rule does not allow, when a package has no rule, and when
// a rule matches no package.
func TestImportDirection(t *testing.T) {
	pkgs := modulePackages(t)
	used := make([]bool, len(Rules))
	names := make([]string, 0, len(pkgs))
	for name := range pkgs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		i := slices.IndexFunc(Rules, func(r Rule) bool { return Match(r.Pkgs, name) })
		if i < 0 {
			t.Errorf("package %s has no rule: add one to the table in internal/tools/archtest/rules.go "+
				"saying which packages of the module it may import (the import direction of docs/architecture.md)", name)
			continue
		}
		used[i] = true
		r := Rules[i]
		for _, imp := range pkgs[name] {
			if !slices.ContainsFunc(r.May, func(p string) bool { return Match(p, imp) }) {
				t.Errorf("%s imports %s, against the import direction (docs/architecture.md): packages matching %q may import %s "+
					"(rules in internal/tools/archtest/rules.go)", name, imp, r.Pkgs, allowed(r.May))
			}
		}
	}
	for i, r := range Rules {
		if !used[i] {
			t.Errorf("the rule for %q matches no package of the module (or only packages an earlier rule takes): "+
				"remove it or correct it in internal/tools/archtest/rules.go", r.Pkgs)
		}
	}
}

// allowed words a rule's list for an error message.
func allowed(may []string) string {
	if len(may) == 0 {
		return "nothing of the module"
	}
	return "only " + strings.Join(may, ", ")
}

// TestMatch pins the pattern syntax of the table.
func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, pkg string
		want         bool
	}{
		{"fileserve", "fileserve", true},
		{"fileserve", "fileserve/storetest", false},
		{"fileserve", "fileservex", false},
		{"agents/ocr/...", "agents/ocr", true},
		{"agents/ocr/...", "agents/ocr/internal/ocrtest", true},
		{"agents/ocr/...", "agents/ocrx", false},
		{"internal/...", "internal", true},
	} {
		if got := Match(c.pattern, c.pkg); got != c.want {
			t.Errorf("match(%q, %q) = %v, want %v", c.pattern, c.pkg, got, c.want)
		}
	}
}
