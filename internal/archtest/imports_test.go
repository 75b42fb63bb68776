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
)

// leaves may be imported by both sides, server and client (DESIGN §6).
var leaves = []string{"transfer", "transfer/mcpfile", "filetype", "filename", "settings"}

// rule says which packages of this module the packages matched by pkgs may
// import (in their non-test files; tests may start whatever they need).
// Paths are relative to the module; a pattern ending in "/..." matches that
// package and every package below it, any other pattern only itself. The
// first rule whose pkgs matches a package is its rule: put the narrow ones
// first. Every package must have a rule, and every rule must match a
// package, so the table stays the picture of the tree.
type rule struct {
	pkgs string
	may  []string
}

// rules is DESIGN §2 as a table: leaves import nothing of the module;
// signing → fileserve → cleanup → agentcore on the server side; client and
// the CLI on the leaves alone (no server internals); agents on agentcore and
// the leaves; agent mains on agentcore and their agent only.
var rules = []rule{
	// Leaves of both sides.
	{"transfer", []string{"filename", "transfer/mcpfile"}},
	{"transfer/mcpfile", nil}, // the draft MCP file contract (SEP-2631), its one mapping
	{"filetype", nil},
	{"filename", nil},
	{"settings", nil}, // each setting declared once (env, flag, default, doc)

	// The server side, each layer on the ones before it.
	{"internal/signing", nil},
	{"internal/promreg", nil},    // the Prometheus registry the server layers share
	{"internal/memcg", nil},      // the cgroup memory limit, for GOMEMLIMIT
	{"internal/boundedmap", nil}, // a size-capped map for fileserve and its HTTP handlers
	{"fileserve", with(leaves, "internal/boundedmap")},
	{"fileserve/s3store", with(leaves, "fileserve")},                   // the S3 store, linked only where imported
	{"fileserve/storetest", []string{"fileserve"}},                     // the Store conformance suite
	{"fileserve/s3bench", nil},                                         // benchmarks only
	{"internal/revocation", []string{"fileserve", "internal/signing"}}, // revoked URLs and deleted files, shared through the store's records
	{"internal/filehttp", with(leaves, "fileserve", "internal/signing", "internal/boundedmap", "internal/promreg", "internal/revocation")},
	{"internal/cleanup", []string{"fileserve", "internal/promreg"}},
	{"agentcore", with(leaves, "fileserve", "internal/signing", "internal/filehttp", "internal/quickget", "internal/cleanup", "internal/promreg", "internal/memcg", "internal/revocation", "internal/boundedmap")},
	{"internal/quickget", nil},                                   // downloads read and answered without net/http's per-request work
	{"agentcore/agenttest", with(leaves, "agentcore", "client")}, // the public test helper: an agent in-process, the host side in front

	// The client side: the leaves, never a server package. agentcore may
	// not import a2acall (the A2A client), so agents calling no peer do not
	// link it.
	{"client", leaves},
	{"a2acall", leaves},
	// The gateway is a host: the client package, never a server package.
	{"gateway", with(leaves, "client")},
	// The contract check is a host too: it drives any MCP server.
	{"contractcheck", with(leaves, "client")},
	{"cmd/agentura", with(leaves, "client", "gateway", "contractcheck")},

	// Agents know only agentcore and the leaves (and their own sub-packages);
	// their mains are thin: agentcore, the agent and the S3 store's scheme.
	{"agents/ocr/internal/ocrtest", []string{"internal/requiretool"}}, // the OCR tests' inputs
	{"agents/ocr/...", with(leaves, "agentcore", "agents/ocr/...")},
	{"agents/composer/...", with(leaves, "agentcore", "agents/composer/...")},
	{"cmd/ocr-agent", []string{"agentcore", "agents/ocr", "fileserve/s3store"}},
	{"cmd/composer-agent", []string{"agentcore", "agents/composer", "fileserve/s3store"}},
	{"examples/...", with(leaves, "agentcore", "a2acall", "fileserve/s3store", "examples/...")},

	// Deployment checks: no code of the module.
	{"deploy/...", nil},

	// Test helpers under internal/: only tests import them.
	{"internal/testagent/cmd/testagent", []string{"agentcore", "internal/testagent"}}, // the test agent as a binary
	{"internal/testagent", with(leaves, "agentcore", "examples/fileagent")},
	{"internal/s3test", []string{"internal/requiretool"}},
	{"internal/hydratest", []string{"internal/demologin", "internal/requiretool", "agentcore", "examples/fileagent"}}, // a real identity provider (Ory Hydra) for the OAuth tests
	{"internal/demologin", nil},                                // the demo login and consent pages of that provider
	{"internal/cmd/demologin", []string{"internal/demologin"}}, // the same as a binary (make up-auth)
	{"internal/mcptest", leaves},
	{"internal/limitstest", nil},                                                         // tests only: the limits of a built agent
	{"internal/cmd/httpprobe", leaves},                                                   // the S3 image's health check
	{"internal/cmd/benchagent", with(leaves, "agentcore")},                               // make bench-nginx: the file service alone
	{"internal/cmd/gendocs", with(leaves, "agentcore", "agents/ocr", "agents/composer")}, // README and .env.example from the declarations
	{"internal/...", nil},
}

// with returns list followed by more, in a new slice.
func with(list []string, more ...string) []string {
	return append(slices.Clip(list), more...)
}

// match reports whether the module-relative package path pkg matches pattern.
func match(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	return pkg == pattern
}

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
	out, err := exec.Command(goCmd, "list", "-m", "-f", "{{.Path}} {{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", stderrOf(err))
	}
	mod, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	cmd := exec.Command(goCmd, "list", "-e", "-json=ImportPath,Imports,Error", "./...")
	cmd.Dir = dir
	out, err = cmd.Output()
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
	used := make([]bool, len(rules))
	names := make([]string, 0, len(pkgs))
	for name := range pkgs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		i := slices.IndexFunc(rules, func(r rule) bool { return match(r.pkgs, name) })
		if i < 0 {
			t.Errorf("package %s has no rule: add one to the table in internal/archtest/imports_test.go "+
				"saying which packages of the module it may import (DESIGN §2)", name)
			continue
		}
		used[i] = true
		r := rules[i]
		for _, imp := range pkgs[name] {
			if !slices.ContainsFunc(r.may, func(p string) bool { return match(p, imp) }) {
				t.Errorf("%s imports %s, against the import direction of DESIGN §2: packages matching %q may import %s "+
					"(rules in internal/archtest/imports_test.go)", name, imp, r.pkgs, allowed(r.may))
			}
		}
	}
	for i, r := range rules {
		if !used[i] {
			t.Errorf("the rule for %q matches no package of the module (or only packages an earlier rule takes): "+
				"remove it or correct it in internal/archtest/imports_test.go", r.pkgs)
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
		if got := match(c.pattern, c.pkg); got != c.want {
			t.Errorf("match(%q, %q) = %v, want %v", c.pattern, c.pkg, got, c.want)
		}
	}
}
