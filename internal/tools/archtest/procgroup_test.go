package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// procgroupPkg is the package every test starts its processes through.
const procgroupPkg = "github.com/agentura/agentura/internal/testkit/procgroup"

// TestTestsStartProcessesThroughProcgroup fails when a package's tests, or a
// test helper package (a name ending in "test"), import os/exec without
// internal/testkit/procgroup: a process started there could outlive a test binary
// killed by its -timeout. (Tests that only look a program up on PATH go
// through internal/testkit/requiretool.)
func TestTestsStartProcessesThroughProcgroup(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = moduleDir(t)
	out, err := procgroup.Output(cmd)
	if err != nil {
		t.Fatalf("go list: %v", stderrOf(err))
	}
	checked := 0
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("read go list's output: %v", err)
		}
		if p.ImportPath == procgroupPkg {
			continue
		}
		for _, files := range []struct {
			what    string
			imports []string
		}{{"tests", append(slices.Clone(p.TestImports), p.XTestImports...)}, {"test helper", helperImports(p.ImportPath, p.Imports)}} {
			if slices.Contains(files.imports, "os/exec") {
				checked++
				if !slices.Contains(files.imports, procgroupPkg) {
					t.Errorf("the %s of %s import os/exec but not internal/testkit/procgroup: start processes with procgroup.Start, Run, Output "+
						"or CombinedOutput, so that none outlives a test binary killed by its timeout", files.what, p.ImportPath)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package's tests import os/exec: go list's output was not read right")
	}
}

// helperImports is imports when pkg is a test helper (its name ends in
// "test"), else nothing.
func helperImports(pkg string, imports []string) []string {
	if strings.HasSuffix(path.Base(pkg), "test") {
		return imports
	}
	return nil
}

// moduleDir is the module's root folder.
func moduleDir(t *testing.T) string {
	t.Helper()
	out, err := procgroup.Output(exec.Command("go", "list", "-m", "-f", "{{.Dir}}"))
	if err != nil {
		t.Fatalf("go list -m: %v", stderrOf(err))
	}
	return strings.TrimSpace(string(out))
}
