package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocsUpToDate fails when the settings tables of docs/ or
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
	docText, err := os.ReadFile(filepath.Join(root, "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(docText), "| lifetime of a signed URL |", "| lifetime of a URL |", 1)
	if got, err := tables(edited, map[string]int{}); err != nil || got == edited {
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

// TestDocsStandAlone: no Markdown file of the repository points outside it
// (a clone must be complete), and every relative link names a file that
// exists.
func TestDocsStandAlone(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	link := regexp.MustCompile(`\]\(([^)#:]*)(?:#([^)]*))?\)`)
	code := regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "data" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(text), "../shared") {
			t.Errorf("%s mentions ../shared, which a clone does not have; say it in docs/ instead", path)
		}
		if strings.Contains(string(text), "$(base64") {
			t.Errorf("%s pastes a file into a command line with $(base64 ...), which fails above about 100 KB (argument list too long); build the body in a pipe and send it with curl --data-binary @-", path)
		}
		prose := code.ReplaceAllString(string(text), "")
		for _, m := range link.FindAllStringSubmatch(prose, -1) {
			target := path
			if m[1] != "" {
				target = filepath.Join(filepath.Dir(path), m[1])
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links to %s, which does not exist", path, m[1])
				continue
			}
			if m[2] != "" && strings.HasSuffix(target, ".md") && !anchors(t, target)[m[2]] {
				t.Errorf("%s links to %s#%s, a heading %s does not have", path, m[1], m[2], target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// anchors are the link targets of the headings of a Markdown file, as
// GitHub makes them: lower case, punctuation dropped, spaces as hyphens.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#"))) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}
