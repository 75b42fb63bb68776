package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsUpToDate fails when README.md's settings tables or
// deploy/.env.example no longer say what the declarations say.
func TestDocsUpToDate(t *testing.T) {
	stale, err := run(filepath.Join("..", "..", ".."), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range stale {
		t.Errorf("%s is out of date with the settings declarations; run go run ./internal/cmd/gendocs", path)
	}
}

// TestDriftIsCaught: a table edited by hand, a compose default that is not
// the code's, and a variable compose passes that nothing declares are all
// found.
func TestDriftIsCaught(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	readmeText, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(readmeText), "| lifetime of a signed URL |", "| lifetime of a URL |", 1)
	if got, err := readme(edited, root); err != nil || got == edited {
		t.Errorf("a hand-edited table was not rewritten (err %v)", err)
	}

	dir := t.TempDir()
	envText, err := os.ReadFile(filepath.Join(root, "deploy", ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	compose, err := os.ReadFile(filepath.Join(root, "deploy", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, to, says string }{
		{"${AGENT_URL_TTL:-1h}", "${AGENT_URL_TTL:-2h}", "the code's is \"1h\""},
		{"AGENT_LOG_LEVEL: ${AGENT_LOG_LEVEL:-info}", "AGENT_LOG_LEVEL: ${AGENT_LOG_LEVEL:-info}\n      AGENT_NEW: ${AGENT_NEW:-x}", "AGENT_NEW through, which no settings list declares"},
	} {
		changed := strings.Replace(string(compose), tc.from, tc.to, 1)
		if err := os.WriteFile(filepath.Join(dir, "deploy", "docker-compose.yml"), []byte(changed), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := envExample(string(envText), dir); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("compose with %s: %v; want an error saying %q", tc.to, err, tc.says)
		}
	}
}
