// Command gendocs writes what is generated from the settings declarations
// (agentcore.Config.Settings, ocr.Config.Settings): the environment tables of
// README.md, between their <!-- settings: … --> and <!-- end settings -->
// lines, and the settings part of deploy/.env.example, whose variables and
// values are the ones deploy/docker-compose.yml passes through. Run it from
// the repository root after changing a declaration:
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
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/ocr"
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

// lists are the declared settings by the name their README table carries.
func lists() map[string]settings.List {
	var framework agentcore.Config
	var agent ocr.Config
	return map[string]settings.List{
		"agentcore": framework.Settings("<agent>", ""),
		"ocr":       agent.Settings(),
	}
}

// run brings README.md and deploy/.env.example up to date under root,
// writing them when write is set, and returns those that were stale.
func run(root string, write bool) ([]string, error) {
	var stale []string
	for _, f := range []struct {
		path string
		gen  func(old, root string) (string, error)
	}{
		{"README.md", readme},
		{filepath.Join("deploy", ".env.example"), envExample},
	} {
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
	return stale, nil
}

// block is a generated table of README.md with its marker lines.
var block = regexp.MustCompile(`(?s)(<!-- settings: ([a-z]+) [^\n]*-->\n)(.*?)(<!-- end settings -->)`)

// readme replaces each table between markers with the one its list makes.
func readme(old, _ string) (string, error) {
	all := lists()
	var err error
	found := 0
	out := block.ReplaceAllStringFunc(old, func(m string) string {
		parts := block.FindStringSubmatch(m)
		list, ok := all[parts[2]]
		if !ok {
			err = fmt.Errorf("no settings called %q (known: agentcore, ocr)", parts[2])
			return m
		}
		found++
		return parts[1] + list.Markdown() + parts[4]
	})
	if err == nil && found != len(all) {
		err = fmt.Errorf("found %d settings tables; want %d, one per list (<!-- settings: NAME ... --> … <!-- end settings -->)", found, len(all))
	}
	return out, err
}

// envStart opens the generated part of deploy/.env.example.
const envStart = "# --- Settings both agents share (AGENT_* as in the README's table) ---\n"

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
		{title: envStart, list: all["agentcore"]},
		{title: "# --- OCR agent only ---\n", list: all["ocr"]},
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
			text := settings.Plain(sentence(v.Doc)) // a doc opening with `code` keeps its case
			if note := deployNotes[name]; note != "" {
				text += " " + note
			}
			b := &sections[i].body
			b.WriteString(comment(text) + name + "=" + value + "\n")
			placed = true
		}
		if !placed {
			return "", fmt.Errorf("deploy/docker-compose.yml passes %s through, which no settings list declares", name)
		}
	}
	var b strings.Builder
	b.WriteString(head)
	for i, s := range sections {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(s.title)
		if i == 0 {
			b.WriteString("# (Generated from the settings declarations by go run ./internal/cmd/gendocs; edit those, not this part.)\n")
		}
		b.WriteString(s.body.String())
	}
	return b.String(), nil
}

// comment writes text as comment lines of at most about 110 characters.
func comment(text string) string {
	var b strings.Builder
	line := "#"
	for _, word := range strings.Fields(text) {
		if len(line) > 1 && len(line)+1+len(word) > 110 {
			b.WriteString(line + "\n")
			line = "#"
		}
		line += " " + word
	}
	b.WriteString(line + "\n")
	return b.String()
}

// sentence starts s with a capital, unless it opens with code, and ends it
// with a full stop.
func sentence(s string) string {
	if s == "" || s[0] == '`' {
		if s != "" && !strings.HasSuffix(s, ".") {
			s += "."
		}
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
