package deploy

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
	checkEnvExample(t, "docker-compose.yml", ".env.example")
}

// TestScaleEnvExampleDocumentsEveryVariable is the same check for the
// scale-out variant, whose secrets (${VAR:?message}) have no default and are
// left empty in the example.
func TestScaleEnvExampleDocumentsEveryVariable(t *testing.T) {
	checkEnvExample(t, "docker-compose.scale.yml", ".env.scale.example")
}

// checkEnvExample checks that the env example in deploy/ documents each
// ${VAR} of the compose file in deploy/ with the compose file's default.
func checkEnvExample(t *testing.T, composeFile, exampleFile string) {
	t.Helper()
	compose, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{"COMPOSE_PROJECT_NAME": true} // read by Compose itself
	defaults := map[string]string{}
	for _, m := range regexp.MustCompile(`\$\{([A-Z0-9_]+)(:-([^}]*)|:\?[^}]*)?\}`).FindAllSubmatch(compose, -1) {
		used[string(m[1])] = true
		if def, seen := defaults[string(m[1])]; seen && def != string(m[3]) {
			t.Errorf("%s gives ${%s} two defaults: %q and %q", composeFile, m[1], def, m[3])
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
				t.Errorf("%s sets %s, but %s's default is %q", exampleFile, line, composeFile, def)
			}
			if !commented {
				t.Errorf("%s: %s has no comment above it saying what it does", exampleFile, m[1])
			}
		default:
			commented = false
		}
	}
	for name := range used {
		if !documented[name] {
			t.Errorf("%s reads ${%s}, which %s does not document", composeFile, name, exampleFile)
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
		t.Errorf("%s sets %v, which %s never reads", exampleFile, extra, composeFile)
	}
}
