package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// publishedVersion is the version the local module proxy of
// TestNewBuildsAgainstAPublishedVersion serves this checkout as.
const publishedVersion = "v0.1.0"

// TestNewBuildsAgainstAPublishedVersion: `agentura new` without --replace,
// then the steps it prints (go get ...@latest, go mod tidy), then go build,
// vet and test, against a module proxy that serves this checkout as a tagged
// version (a module zip made with golang.org/x/mod/zip, as a release is) and
// the module cache for every other module: a new user's path with no
// checkout, offline.
func TestNewBuildsAgainstAPublishedVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new module: not in -short")
	}
	checkout, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	warmModuleCache(t, checkout)
	proxy := t.TempDir()
	publish(t, checkout, proxy, publishedVersion)

	dir := filepath.Join(t.TempDir(), "lines-agent")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"new", dir, "--module", "example.com/acme/lines-agent"}, &stdout, &stderr); code != 0 {
		t.Fatalf("agentura new: exit %d: %s", code, stderr.String())
	}
	if mod, _ := os.ReadFile(filepath.Join(dir, "go.mod")); bytes.Contains(mod, []byte("v0.0.0-0001")) || bytes.Contains(mod, []byte("replace")) {
		t.Fatalf("go.mod without --replace holds a placeholder version or a replace:\n%s", mod)
	}
	steps := printedGoSteps(t, stdout.String())
	if len(steps) == 0 || steps[0][1] != "get" {
		t.Fatalf("the printed steps start with no go get (a build from a checkout knows no published version):\n%s", stdout.String())
	}
	cache := goEnv(t, "GOMODCACHE")
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(cache, "cache", "download")),
		"GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	for _, args := range append(steps, []string{"go", "build", "./..."}, []string{"go", "vet", "./..."}, []string{"go", "test", "-count=1", "./..."}) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := procgroup.CombinedOutput(cmd); err != nil {
			t.Fatalf("%s in the new module: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !bytes.Contains(mod, []byte("github.com/agentura/agentura "+publishedVersion)) {
		t.Errorf("go.mod does not require the published %s:\n%s", publishedVersion, mod)
	}
}

// printedGoSteps returns the go commands among the steps `agentura new`
// printed, comments cut off.
func printedGoSteps(t *testing.T, out string) [][]string {
	t.Helper()
	var steps [][]string
	for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if f := strings.Fields(line); len(f) > 1 && f[0] == "go" {
			steps = append(steps, f)
		}
	}
	return steps
}

// publish makes proxy a GOPROXY=file:// folder serving the module in
// checkout as version: its list, .info, .mod and a module zip of the files
// git tracks or would track (build outputs left out), through
// golang.org/x/mod/zip, which also checks them as the go command would.
func publish(t *testing.T, checkout, proxy, version string) {
	t.Helper()
	mv := module.Version{Path: "github.com/agentura/agentura", Version: version}
	at := filepath.Join(proxy, filepath.FromSlash(mv.Path), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zf.Close()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = checkout
	if out, gitErr := procgroup.Output(cmd); gitErr == nil {
		var files []modzip.File
		for _, p := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			if _, err := os.Lstat(filepath.Join(checkout, p)); err == nil { // a file deleted but not yet staged is gone
				files = append(files, treeFile{checkout, p})
			}
		}
		err = modzip.Create(zf, mv, files)
	} else {
		t.Logf("git ls-files: %v; zipping the whole folder", gitErr)
		err = modzip.CreateFromDir(zf, mv, checkout)
	}
	if err != nil {
		t.Fatalf("this checkout is not a publishable module zip: %v", err)
	}
	gomod, err := os.ReadFile(filepath.Join(checkout, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeFile is a file of the checkout as golang.org/x/mod/zip takes it.
type treeFile struct{ root, rel string }

func (f treeFile) Path() string                 { return filepath.ToSlash(f.rel) }
func (f treeFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(filepath.Join(f.root, f.rel)) }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(filepath.Join(f.root, f.rel)) }

// goEnv is `go env name`.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := procgroup.Output(exec.Command("go", "env", name))
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}
