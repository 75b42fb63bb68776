package e2e

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEnvExampleDocumentsEveryVariable checks, without Docker, that each
// ${VAR} of deploy/docker-compose.yml has a line VAR=default in
// deploy/.env.example under a comment, with the value the compose file
// defaults to, and that the example sets nothing the compose file ignores.
func TestEnvExampleDocumentsEveryVariable(t *testing.T) {
	compose, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{"COMPOSE_PROJECT_NAME": true} // read by Compose itself
	defaults := map[string]string{}
	for _, m := range regexp.MustCompile(`\$\{([A-Z0-9_]+)(:-([^}]*))?\}`).FindAllSubmatch(compose, -1) {
		used[string(m[1])] = true
		if def, seen := defaults[string(m[1])]; seen && def != string(m[3]) {
			t.Errorf("docker-compose.yml gives ${%s} two defaults: %q and %q", m[1], def, m[3])
		}
		defaults[string(m[1])] = string(m[3])
	}
	// A variable line needs a comment above it, directly or above the group
	// of variable lines it belongs to (OCR_PORT and COMPOSER_PORT share one).
	documented := map[string]bool{}
	varLine := regexp.MustCompile(`^([A-Z0-9_]+)=`)
	commented := false
	for _, line := range strings.Split(string(example), "\n") {
		switch m := varLine.FindStringSubmatch(line); {
		case strings.HasPrefix(line, "#"):
			commented = true
		case m != nil:
			documented[m[1]] = true
			// A copied .env.example changes nothing until edited.
			if def, ok := defaults[m[1]]; ok && strings.TrimPrefix(line, m[0]) != def {
				t.Errorf(".env.example sets %s, but docker-compose.yml's default is %q", line, def)
			}
			if !commented {
				t.Errorf(".env.example: %s has no comment above it saying what it does", m[1])
			}
		default:
			commented = false
		}
	}
	for name := range used {
		if !documented[name] {
			t.Errorf("docker-compose.yml reads ${%s}, which .env.example does not document", name)
		}
	}
	var extra []string
	for name := range documented {
		if !used[name] {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	if len(extra) > 0 {
		t.Errorf(".env.example sets %v, which docker-compose.yml never reads", extra)
	}
}
