package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// TestNewScaffoldsAWorkingModule: `agentura new` with --replace pointing at
// this checkout gives a module where go mod tidy, go build, go vet and go
// test pass offline (GOPROXY=off: the module cache and the checkout's go.sum
// are all it has).
func TestNewScaffoldsAWorkingModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new module: not in -short")
	}
	checkout, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	warmModuleCache(t, checkout)
	dir := filepath.Join(t.TempDir(), "lines-agent")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"new", dir, "--module", "example.com/acme/lines-agent", "--replace", checkout}, &stdout, &stderr); code != 0 {
		t.Fatalf("agentura new: exit %d: %s", code, stderr.String())
	}
	for _, f := range []string{"go.mod", "main.go", "agent/agent.go", "agent/agent_test.go", "Dockerfile", "compose.yml", "Makefile", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	dockerfile, _ := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if !strings.Contains(string(dockerfile), "FROM scratch") || !strings.Contains(string(dockerfile), "USER 65532:65532") {
		t.Errorf("the Dockerfile is not a static non-root image:\n%s", dockerfile)
	}
	for _, args := range [][]string{
		{"mod", "tidy"},
		{"build", "./..."},
		{"vet", "./..."},
		{"test", "-count=1", "./..."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := procgroup.CombinedOutput(cmd); err != nil {
			t.Fatalf("go %s in the new module: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if out, _ := procgroup.Output(exec.Command("gofmt", "-l", dir)); len(out) > 0 {
		t.Errorf("the new module is not gofmt-clean: %s", out)
	}
}

// warmModuleCache fills the module cache with the checkout's whole build
// list, as a user does once with go get: the offline steps of the scaffold
// tests need it (go mod tidy in the new module looks at modules that building
// the checkout never downloads, such as the umbrella genproto module a2a-go's
// gRPC packages sit beside).
//
// It works on a copy of the checkout's go.mod and go.sum (-modfile): go mod
// download all records the sums of the whole build list, which would
// otherwise change the checkout's go.sum.
func warmModuleCache(t *testing.T, checkout string) {
	t.Helper()
	modfile := filepath.Join(t.TempDir(), "go.mod")
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(checkout, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(modfile), name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	warm := exec.Command("go", "mod", "download", "-modfile="+modfile, "all")
	warm.Dir = checkout
	if out, err := procgroup.CombinedOutput(warm); err != nil {
		t.Fatalf("go mod download all in the checkout (the module cache must hold agentura's dependencies): %v\n%s", err, out)
	}
}

func TestNewRefusals(t *testing.T) {
	full := filepath.Join(t.TempDir(), "full")
	if err := os.Mkdir(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"new", filepath.Join(t.TempDir(), "x")}, "--module"},
		{[]string{"new", full, "--module", "example.com/x"}, "not empty"},
		{[]string{"new", filepath.Join(t.TempDir(), "My Agent"), "--module", "example.com/x"}, "not a usable agent name"},
		{[]string{"new", filepath.Join(t.TempDir(), "x"), "--module", "example.com/x", "--replace", t.TempDir()}, "not a checkout of agentura"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("%v: exit %d, %q; want a refusal saying %q", tc.args[1:], code, stderr.String(), tc.says)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(full, "main.go")); string(b) != "package main\n" {
		t.Error("a refused scaffold touched the user's file")
	}
}

// What is slow is said before it is slow: `agentura new` and the
// scaffold's README say the first make test builds the dependencies with
// -race and takes minutes on a small machine.
func TestNewSaysTheFirstTestIsSlow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "slow-agent")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"new", dir, "--module", "example.com/acme/slow-agent"}, &stdout, &stderr); code != 0 {
		t.Fatalf("agentura new: exit %d: %s", code, stderr.String())
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	makefile, _ := os.ReadFile(filepath.Join(dir, "Makefile"))
	if !strings.Contains(string(makefile), "test -race ./...") {
		t.Fatalf("the Makefile's test target no longer uses -race: say what it does instead:\n%s", makefile)
	}
	for what, text := range map[string]string{"the output": stdout.String(), "README.md": string(readme)} {
		if !strings.Contains(text, "The first make test") && !strings.Contains(text, "The first `make test`") ||
			!strings.Contains(text, "-race") || !strings.Contains(text, "a few minutes on a small machine") {
			t.Errorf("%s does not say that the first make test is slow:\n%s", what, text)
		}
	}
}
