package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/agentura/agentura/internal/tools/archtest"
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

// TestDiagramDriftIsCaught: a diagram edited by hand is rewritten, a page
// without its markers is an error, and so are a rule the layers do not
// place and a layer no rule is in.
func TestDiagramDriftIsCaught(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(text), " --> p_signing\n", " --> p_fileserve\n", 1)
	if edited == string(text) {
		t.Fatal("the diagram has no arrow to signing to edit")
	}
	if got, err := architecture(edited, ""); err != nil || got != string(text) {
		t.Errorf("a hand-edited diagram was not rewritten (err %v)", err)
	}
	if _, err := diagram(strings.Replace(string(text), "<!-- end diagram -->", "", 1), ""); err == nil {
		t.Error("a page without the diagram's end marker was accepted")
	}

	rules := append(slices.Clip(archtest.Rules), archtest.Rule{Pkgs: "newpkg", Role: "new"})
	if _, err := buildGraph(rules, layers); err == nil || !strings.Contains(err.Error(), "newpkg is in no layer") {
		t.Errorf("a rule in no layer: %v", err)
	}
	ls := append(slices.Clip(layers), layer{id: "empty", title: "nothing", pkgs: []string{"nothing/..."}})
	if _, err := buildGraph(archtest.Rules, ls); err == nil || !strings.Contains(err.Error(), `"empty" holds no rule`) {
		t.Errorf("a layer with no rule: %v", err)
	}
}

// TestDiagramIsTheRules: every allowed import between packages the diagram
// shows is an arrow (from the package's node or its box, to the imported
// package's node or its box), and every arrow is an allowed import: from
// every package of a box it leaves, to every package of a box it enters.
func TestDiagramIsTheRules(t *testing.T) {
	g, err := buildGraph(archtest.Rules, layers)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[[2]string]bool{} // node -> node
	for _, r := range archtest.Rules {
		from := g.nodeOf[r.Pkgs]
		if from == "" {
			continue
		}
		for _, m := range r.May {
			for _, i := range covering(archtest.Rules, m) {
				if to := g.nodeOf[archtest.Rules[i].Pkgs]; to != "" && to != from {
					allowed[[2]string{from, to}] = true
				}
			}
		}
	}
	boxOf := map[string]string{}
	members := map[string][]string{}
	for _, b := range g.boxes {
		for _, n := range b.nodes {
			boxOf[n.id] = b.id
			members[b.id] = append(members[b.id], n.id)
		}
	}
	arrow := map[[2]string]bool{}
	for _, from := range g.order {
		for _, to := range g.edges[from] {
			arrow[[2]string{from, to}] = true
		}
	}
	for pair := range allowed {
		from, to := pair[0], pair[1]
		if !arrow[pair] && !arrow[[2]string{from, boxOf[to]}] && !arrow[[2]string{boxOf[from], to}] && !arrow[[2]string{boxOf[from], boxOf[to]}] {
			t.Errorf("%s may import %s, and no arrow says so", from, to)
		}
	}
	expand := func(id string) []string {
		if m, ok := members[id]; ok {
			return m
		}
		return []string{id}
	}
	n := 0
	for pair := range arrow {
		for _, from := range expand(pair[0]) {
			for _, to := range expand(pair[1]) {
				if !allowed[[2]string{from, to}] {
					t.Errorf("the arrow %s --> %s says %s may import %s; the rules do not", pair[0], pair[1], from, to)
				}
			}
		}
		n++
	}
	if n < 20 {
		t.Errorf("the diagram has %d arrows; the rules make many more", n)
	}
	if !strings.Contains(g.Mermaid(), "\n  p_internal_lib_revocation --> p_signing\n") {
		t.Errorf("revocation's arrow to signing is missing:\n%s", g.Mermaid())
	}
}
