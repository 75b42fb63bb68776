package deploy

import (
	"os"
	"os/exec"

	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// TestUpAuthWaitsForEveryService runs the wait step of `make up-auth`, as
// `make -n` prints it, against stand-ins for docker and docker-compose: the
// compose stand-in lists one container per service of the files it is given
// (the real docker-compose's `config --services`, which needs no engine) and
// the docker stand-in calls each healthy. The step must wait for all four
// services of the project (the two agents, Hydra and the demo login), not
// only for those of docker-compose.yml.
func TestUpAuthWaitsForEveryService(t *testing.T) {
	// The real Compose, v2 or v1, reads the compose files' services.
	var compose string
	if docker, err := exec.LookPath("docker"); err == nil && procgroup.Run(exec.Command(docker, "compose", "version")) == nil {
		compose = docker + " compose"
	} else if compose, err = exec.LookPath("docker-compose"); err != nil {
		requiretool.Missing(t, "neither docker compose (v2) nor docker-compose (v1) is installed, and this test reads the compose files' services with it: apt-get install docker-compose (or make deps)")
	}
	requiretool.Command(t, "make", "apt-get install make")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := procgroup.CombinedOutput(exec.Command("make", "-s", "-n", "-C", root, "up-auth"))
	if err != nil {
		t.Fatalf("make -n up-auth: %v\n%s", err, out)
	}
	var step string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "wait-healthy.sh") {
			step = line
		}
	}
	if step == "" {
		t.Fatalf("make -n up-auth runs no deploy/wait-healthy.sh:\n%s", out)
	}

	bin := t.TempDir()
	seen := filepath.Join(t.TempDir(), "inspected")
	writeStub(t, filepath.Join(bin, "docker-compose"), `#!/usr/bin/env bash
# ps -a -q: one "container" per service of the files given, named after it.
args=()
for a in "$@"; do [ "$a" = ps ] && break; args+=("$a"); done
exec `+compose+` "${args[@]}" config --services
`)
	writeStub(t, filepath.Join(bin, "docker"), `#!/usr/bin/env bash
case "$1" in
compose) exit 1 ;; # no Compose v2: wait-healthy.sh takes docker-compose
inspect) echo "$4" >>`+seen+`; echo "/$4 running healthy" ;;
*) echo "docker stand-in: unexpected $*" >&2; exit 2 ;;
esac
`)
	cmd := exec.Command("bash", "-c", step)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := procgroup.CombinedOutput(cmd); err != nil {
		t.Fatalf("%s: %v\n%s", step, err, out)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(b))
	slices.Sort(got)
	got = slices.Compact(got)
	want := []string{"composer-agent", "demologin", "hydra", "ocr-agent"}
	if !slices.Equal(got, want) {
		t.Errorf("%s waited for %v, want every service of the project %v", step, got, want)
	}
}

// writeStub writes an executable script.
func writeStub(t *testing.T, path, script string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestWaitHealthyWaitsOutUnhealthy runs deploy/wait-healthy.sh against
// stand-ins for docker-compose (two containers) and docker: a container
// whose checks failed (unhealthy, as an agent on a loaded machine whose
// identity provider answers slowly) is waited on until a check passes, and
// a container that stopped fails the wait at once, naming it, while the
// other is still starting.
func TestWaitHealthyWaitsOutUnhealthy(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		states  string // the ocr container's states, one per inspect
		fails   bool
		message string
	}{
		{"unhealthy, then healthy", "running/starting running/unhealthy running/unhealthy running/healthy", false, "all 2 containers healthy"},
		{"exited", "running/starting exited/unhealthy", true, "ocr is exited/unhealthy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, dir := t.TempDir(), t.TempDir()
			writeStub(t, filepath.Join(bin, "docker-compose"), "#!/usr/bin/env bash\necho ocr; echo composer\n")
			// The docker stand-in answers inspect for ocr with the next of its
			// states (the last one from then on) and composer with starting
			// until ocr is done, then healthy.
			writeStub(t, filepath.Join(bin, "docker"), `#!/usr/bin/env bash
case "$1" in
compose) exit 1 ;;
inspect)
	id=${@: -1}
	n=$(cat `+dir+`/$id 2>/dev/null || echo 0); echo $((n+1)) >`+dir+`/$id
	if [ "$id" = ocr ]; then
		read -ra s <<<"`+tc.states+`"; i=$(( n < ${#s[@]} ? n : ${#s[@]}-1 ))
		echo "/ocr ${s[$i]/\// }"
	elif [ "$(cat `+dir+`/ocr)" -ge `+strconv.Itoa(len(strings.Fields(tc.states)))+` ]; then echo "/composer running healthy"
	else echo "/composer running starting"; fi ;;
logs) echo "last lines of $3" ;;
*) echo "docker stand-in: unexpected $*" >&2; exit 2 ;;
esac
`)
			cmd := exec.Command(filepath.Join(root, "deploy", "wait-healthy.sh"), "deploy/docker-compose.yml", "60")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := procgroup.CombinedOutput(cmd)
			if (err != nil) != tc.fails || !strings.Contains(string(out), tc.message) {
				t.Fatalf("wait-healthy.sh: %v\n%s\nwant failure %v and %q", err, out, tc.fails, tc.message)
			}
		})
	}
}
