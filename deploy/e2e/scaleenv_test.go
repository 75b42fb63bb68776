//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestScaleEnvScriptMakesTheSecrets checks, without Docker, what `make
// up-scale` does on a fresh clone: deploy/scale-env.sh writes the settings
// file from the example with the three secrets filled in, fresh each time
// and readable by the owner only, says so, and leaves an existing file alone.
func TestScaleEnvScriptMakesTheSecrets(t *testing.T) {
	root := repoRoot(t)
	script := filepath.Join(root, "deploy", "scale-env.sh")
	secrets := regexp.MustCompile(`(?m)^(SCALE_SIGNING_KEY|S3_ACCESS_KEY|S3_SECRET_KEY)=(.*)$`)
	made := map[string]bool{}
	for i := range 2 {
		file := filepath.Join(t.TempDir(), ".env.scale")
		out := run(t, nil, script, file)
		if !strings.Contains(out, file+" was missing") {
			t.Errorf("run %d says %q; want it to say the file was missing and written", i, out)
		}
		fi, err := os.Stat(file)
		must(t, err, "stat the settings file")
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("the settings file has mode %v, want 0600", fi.Mode().Perm())
		}
		b, err := os.ReadFile(file)
		must(t, err, "read the settings file")
		found := secrets.FindAllStringSubmatch(string(b), -1)
		if len(found) != 3 {
			t.Fatalf("the settings file sets %d of the 3 secrets", len(found))
		}
		for _, m := range found {
			if len(m[2]) < 20 || made[m[2]] || strings.Contains(out, m[2]) {
				t.Errorf("%s is short, repeated, or printed", m[1])
			}
			made[m[2]] = true
		}
		// The rest is the example's, unchanged.
		example, err := os.ReadFile(filepath.Join(root, "deploy", ".env.scale.example"))
		must(t, err, "read the example")
		if got, want := secrets.ReplaceAllString(string(b), "$1="), string(example); got != want {
			t.Errorf("the settings file differs from the example beyond the secrets")
		}
		// Run again: the file is kept as it is.
		run(t, nil, script, file)
		if again, _ := os.ReadFile(file); string(again) != string(b) {
			t.Error("a second run changed an existing settings file")
		}
	}
}
