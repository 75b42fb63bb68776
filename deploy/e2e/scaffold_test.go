//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// TestScaffoldUp: a module from `agentura new` (against this checkout,
// offline) comes up with its own `make up` on whichever Compose this machine
// has, v2 or v1 (which has no --wait: the Makefile waits for the health check
// itself), answers /readyz on its port, and goes with `make down`.
func TestScaffoldUp(t *testing.T) {
	requireDocker(t)
	root := repoRoot(t)
	c := agenturaCLI(t, root)
	name := fmt.Sprintf("scaffold-e2e-%d", os.Getpid())
	dir := filepath.Join(t.TempDir(), name)
	port := freePort(t)
	run(t, nil, c.path, "new", dir, "--module", "example.com/e2e/"+name, "--replace", root, "--port", fmt.Sprint(port))
	inDir := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := procgroup.CombinedOutput(cmd)
		if err != nil {
			t.Fatalf("%s in the new module: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	inDir("go", "mod", "tidy")
	t.Cleanup(func() {
		cmd := exec.Command("make", "down")
		cmd.Dir = dir
		if out, err := procgroup.CombinedOutput(cmd); err != nil {
			t.Errorf("make down: %v\n%s", err, out)
		}
		procgroup.Run(exec.Command("docker", "volume", "rm", "-f", name+"_"+name+"-data"))
		procgroup.Run(exec.Command("docker", "image", "rm", "-f", name+":latest"))
	})
	out := inDir("make", "up")
	if !strings.Contains(out, name+" is up") {
		t.Errorf("make up did not say the agent is up:\n%s", out)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
	if err != nil {
		t.Fatalf("the scaffolded agent after make up: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz of the scaffolded agent answered %s", resp.Status)
	}
}
