// Command gendocs writes what is generated from the settings declarations
// (agentcore.Config.Settings, fileserve.StoreSettings, ocr.Config.Settings):
// the environment tables of
// docs/configuration.md and docs/agents.md, between their
// <!-- settings: … --> and <!-- end settings --> lines, and the settings part of deploy/.env.example, whose variables and
// values are the ones deploy/docker-compose.yml passes through; and, from
// internal/tools/archtest's import rules, the package table of
// docs/architecture.md (between <!-- packages … --> and <!-- end packages -->)
// and its diagram of the imports, a Mermaid flowchart laid out by the layers
// of diagram.go (between <!-- diagram … --> and <!-- end diagram -->). Run it
// from the repository root after changing a declaration:
//
//	go run ./internal/cmd/gendocs
//
// With -check it writes nothing and fails when a file is out of date; its
// test does the same, so the docs cannot drift from the code.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/composer"
	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/fileserve"
	_ "github.com/agentura/agentura/fileserve/s3store" // its settings (AWS_*)
	"github.com/agentura/agentura/internal/tools/archtest"
	"github.com/agentura/agentura/settings"
)

func main() {
	root := flag.String("root", ".", "the repository's root folder")
	check := flag.Bool("check", false, "write nothing; exit 1 when a generated part is out of date")
	flag.Parse()
	stale, err := run(*root, !*check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
	for _, path := range stale {
		if *check {
			fmt.Fprintf(os.Stderr, "gendocs: %s is out of date; run go run ./internal/cmd/gendocs\n", path)
		} else {
			fmt.Println("wrote", path)
		}
	}
	if *check && len(stale) > 0 {
		os.Exit(1)
	}
}

// lists are the declared settings by the name their docs table carries.
func lists() map[string]settings.List {
	var framework agentcore.Config
	var agent ocr.Config
	var composerAgent composer.Config
	return map[string]settings.List{
		"agentcore": framework.Settings("<agent>", ""),
		"storage":   fileserve.StoreSettings(), // the backends this module holds: s3store registers s3://
		"ocr":       agent.Settings(),
		"composer":  composerAgent.Settings(),
	}
}

// tableDocs are the pages that hold the settings tables, each list's table
// in exactly one of them.
var tableDocs = []string{filepath.Join("docs", "configuration.md"), filepath.Join("docs", "agents.md")}

// run brings the docs' settings tables and deploy/.env.example up to date
// under root, writing them when write is set, and returns those that were
// stale.
func run(root string, write bool) ([]string, error) {
	var stale []string
	found := map[string]int{}
	type file struct {
		path string
		gen  func(old, root string) (string, error)
	}
	var files []file
	for _, path := range tableDocs {
		files = append(files, file{path, func(old, _ string) (string, error) { return tables(old, found) }})
	}
	files = append(files, file{filepath.Join("deploy", ".env.example"), envExample}, file{filepath.Join("docs", "architecture.md"), architecture})
	for _, f := range files {
		path := filepath.Join(root, f.path)
		old, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		updated, err := f.gen(string(old), root)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.path, err)
		}
		if updated == string(old) {
			continue
		}
		stale = append(stale, f.path)
		if write {
			if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
				return nil, err
			}
		}
	}
	for name := range lists() {
		if found[name] != 1 {
			return nil, fmt.Errorf("the settings table %q appears %d times in %s; want once (<!-- settings: %s ... --> … <!-- end settings -->)",
				name, found[name], strings.Join(tableDocs, ", "), name)
		}
	}
	return stale, nil
}

// block is a generated settings table of a docs page with its marker lines.
var block = regexp.MustCompile(`(?s)(<!-- settings: ([a-z]+) [^\n]*-->\n)(.*?)(<!-- end settings -->)`)

// tables replaces each table between markers with the one its list makes,
// counting the tables it met by name in found.
func tables(old string, found map[string]int) (string, error) {
	all := lists()
	var err error
	out := block.ReplaceAllStringFunc(old, func(m string) string {
		parts := block.FindStringSubmatch(m)
		list, ok := all[parts[2]]
		if !ok {
			err = fmt.Errorf("no settings called %q (known: %s)", parts[2], strings.Join(slices.Sorted(maps.Keys(all)), ", "))
			return m
		}
		found[parts[2]]++
		return parts[1] + list.Markdown() + parts[4]
	})
	return out, err
}

// envStart opens the generated part of deploy/.env.example.
const envStart = "# --- Settings both agents share (AGENT_* as in docs/configuration.md) ---\n"

// deployNotes are remarks on a variable that only hold in the compose
// deployment; they follow its doc line in deploy/.env.example.
var deployNotes = map[string]string{
	"AGENT_FETCH_ALLOW_HOSTS":    "The peer agent needs no entry here: AGENT_PEER_URLS reaches it, and only through its public URLs.",
	"AGENT_SHUTDOWN_TIMEOUT":     "Compose waits 40s before it kills.",
	"AGENT_OCR_CONCURRENCY":      "Empty: the host's CPU count, which OCR_CPUS does not lower; set it to about OCR_CPUS, rounded up.",
	"AGENT_MAX_CONCURRENT_CALLS": "Empty: 4 × the host's CPU count (the container's cpus limit does not lower it).",
	"AGENT_RATE_BURST":           "Empty: twice AGENT_RATE_LIMIT.",
	"AGENT_TRUSTED_PROXIES":      "Without a proxy in front (as here), leave it empty: the rate limit then counts per client address.",
}

// passThrough matches a compose line that hands a variable of deploy/.env
// to an agent under the same name: "AGENT_URL_TTL: ${AGENT_URL_TTL:-1h}".
var passThrough = regexp.MustCompile(`(?m)^\s+([A-Z][A-Z0-9_]*): \$\{([A-Z][A-Z0-9_]*):-([^}]*)\}\s*$`)

// envExample keeps deploy/.env.example up to envStart and writes the rest:
// each variable docker-compose.yml passes through, with its doc line and
// the compose default.
func envExample(old, root string) (string, error) {
	head, _, ok := strings.Cut(old, envStart)
	if !ok {
		return "", fmt.Errorf("no line %q to start the generated part at", strings.TrimSpace(envStart))
	}
	compose, err := os.ReadFile(filepath.Join(root, "deploy", "docker-compose.yml"))
	if err != nil {
		return "", err
	}
	all := lists()
	sections := []struct {
		title string
		list  settings.List
		body  bytes.Buffer
	}{
		{title: envStart + "# (Generated from the settings declarations by go run ./internal/cmd/gendocs; edit those, not this part.)\n", list: all["agentcore"]},
		{title: "\n# --- OCR agent only ---\n", list: all["ocr"]},
	}
	seen := map[string]bool{}
	for _, m := range passThrough.FindAllStringSubmatch(string(compose), -1) {
		name, value := m[1], m[3]
		if m[1] != m[2] || seen[name] {
			continue
		}
		seen[name] = true
		placed := false
		for i := range sections {
			v := sections[i].list.Lookup(name)
			if v == nil {
				continue
			}
			if !v.IsShown() && value != v.DefaultText() {
				return "", fmt.Errorf("deploy/docker-compose.yml gives %s the default %q; the code's is %q", name, value, v.DefaultText())
			}
			text := settings.Plain(sentence(v.Doc)) + " " + deployNotes[name] // a doc opening with `code` keeps its case
			sections[i].body.WriteString(comment(text) + name + "=" + value + "\n")
			placed = true
		}
		if !placed {
			return "", fmt.Errorf("deploy/docker-compose.yml passes %s through, which no settings list declares", name)
		}
	}
	var b strings.Builder
	b.WriteString(head)
	for _, s := range sections {
		b.WriteString(s.title + s.body.String())
	}
	return b.String(), nil
}

// comment writes text as comment lines of at most about 110 characters:
// wrap's lines of 108, each after "# ".
func comment(text string) string {
	lines := strings.Split(strings.TrimSuffix(wrap(text, 108), "\n"), "\n")
	for i, line := range lines {
		lines[i] = strings.TrimSuffix("# "+line, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// sentence starts s with a capital, unless it opens with code, and ends it
// with a full stop.
func sentence(s string) string {
	if s != "" && s[0] != '`' {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	if s != "" && !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// architecture brings docs/architecture.md's package table and import
// diagram up to date.
func architecture(old, root string) (string, error) {
	s, err := packageTable(old, root)
	if err != nil {
		return "", err
	}
	return diagram(s, root)
}

// packages is the generated package table of docs/architecture.md with its
// marker lines.
var packages = regexp.MustCompile(`(?s)(<!-- packages [^\n]*-->\n)(.*?)(<!-- end packages -->)`)

// packageTable replaces the package table of docs/architecture.md with the
// one internal/tools/archtest's rules make.
func packageTable(old, _ string) (string, error) {
	if n := len(packages.FindAllStringIndex(old, -1)); n != 1 {
		return "", fmt.Errorf("want one package table (<!-- packages ... --> … <!-- end packages -->), found %d", n)
	}
	return packages.ReplaceAllStringFunc(old, func(m string) string {
		parts := packages.FindStringSubmatch(m)
		return parts[1] + archtest.Markdown() + parts[3]
	}), nil
}
