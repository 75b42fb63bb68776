//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// The transcripts of the docs (transcriptDocs: docs/deployment.md,
// docs/observability.md): each ```console block whose first command is
// `make <target>` is what a user types for that target and what it printed
// in a real run. In a block, a line starting with "$ " is a
// command (a line ending in "\" continues on the next), and the lines up to
// the next command are its output. The tests that bring these deployments
// up (TestCompose: make up; TestComposeAuth: make up-auth; TestComposeNginx:
// make up-nginx; TestComposeScale: make up-scale; TestComposeTrace: make
// up-trace, in docs/observability.md) do it by running their
// transcript, each command with bash in the repository root, and compare
// what each printed with the doc.
//
// What the run changes is substituted: the doc's defaults (the Compose
// project, localhost ports, the settings and certificate paths) by this
// run's in the commands, and back in their output. The comparison then
// applies these rules, and no other (normalizeLine, compareOutput):
//   - an output whose first doc line is "..." (or "…") may be preceded by any
//     lines (make's image builds);
//   - a size ("40 KB", "1.2 MB") compares by its unit only, a URL query's
//     values ("state=…") and a task's id not at all, and the CLI's
//     "task <id> working…" lines do not count (which statuses its polls
//     see varies): they change from run to run;
//   - Compose v1's "Creating <container> ... done" lines compare with any
//     padding before the "...", and a run of them in any order: it creates
//     the containers of a step in parallel. Its "Creating <container> ..."
//     line as each starts does not count: on a terminal, which the doc
//     shows, the "... done" line overwrites it (Compose writes both, one
//     after the other, to a pipe);
//   - blank lines at the end of an output are ignored.

// transcriptCommand is one command of a transcript and its doc output.
type transcriptCommand struct {
	file    string   // the doc's path in the checkout (docs/deployment.md)
	line    int      // of file, 1-based
	command string   // as typed, continuation lines included
	want    []string // the output the doc shows
}

// transcriptDocs are the docs that hold transcripts, by their path in the
// checkout: a make target has one transcript among them all.
var transcriptDocs = []string{"docs/deployment.md", "docs/observability.md"}

// docTranscripts reads the transcripts of transcriptDocs, by the make
// target their first command runs ("up" for `$ make up`).
func docTranscripts(t *testing.T, root string) map[string][]transcriptCommand {
	t.Helper()
	all := map[string][]transcriptCommand{}
	for _, name := range transcriptDocs {
		doc, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		must(t, err, "read %s", name)
		blocks, err := parseTranscripts(string(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for target, cmds := range blocks {
			if prev, dup := all[target]; dup {
				t.Fatalf("%s:%d: a second transcript of make %s (the first: %s:%d)", name, cmds[0].line, target, prev[0].file, prev[0].line)
			}
			for i := range cmds {
				cmds[i].file = name
			}
			all[target] = cmds
		}
	}
	return all
}

// parseTranscripts is docTranscripts on one doc's text (its commands'
// file left unset).
func parseTranscripts(doc string) (map[string][]transcriptCommand, error) {
	out := map[string][]transcriptCommand{}
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```console" {
			continue
		}
		start := i + 1
		var cmds []transcriptCommand
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := lines[i]
			if c, ok := strings.CutPrefix(l, "$ "); ok {
				cmd := transcriptCommand{line: i + 1, command: c}
				for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
					i++
					l = lines[i]
					cmd.command += "\n" + l
				}
				cmds = append(cmds, cmd)
				continue
			}
			if len(cmds) == 0 {
				return nil, fmt.Errorf("line %d: the console block starts with output, not a command (\"$ \")", i+1)
			}
			cmds[len(cmds)-1].want = append(cmds[len(cmds)-1].want, l)
		}
		if i == len(lines) {
			return nil, fmt.Errorf("line %d: the console block does not end", start)
		}
		if len(cmds) == 0 {
			return nil, fmt.Errorf("line %d: a console block without a command", start)
		}
		f := strings.Fields(cmds[0].command)
		if len(f) != 2 || f[0] != "make" {
			return nil, fmt.Errorf("line %d: a console block's first command is `make <target>`, not %q", cmds[0].line, cmds[0].command)
		}
		if _, dup := out[f[1]]; dup {
			return nil, fmt.Errorf("line %d: a second transcript of make %s", cmds[0].line, f[1])
		}
		out[f[1]] = cmds
	}
	return out, nil
}

// transcriptRun is how this run's commands differ from the doc's.
type transcriptRun struct {
	root string
	// env is added to the commands' environment, after this process's, the
	// PATH that starts with the checkout's bin/ (the agentura CLI `make
	// build` makes, as the doc tells the user to put on PATH) and the CLI's
	// AGENTURA_NO_BROWSER and AGENTURA_TOKEN_FILE.
	env []string
	// subst pairs the doc's text with this run's: the first replaced by the
	// second in the commands, the second by the first in their output, in
	// this order (longer values first, when one holds another).
	subst [][2]string
	// project is the doc's Compose project and this run's: replaced in the
	// output only, after subst (the doc's commands do not name it, and its
	// default, agentura, is also the CLI's name).
	project [2]string
	// onLine, when set, sees each line of output as it comes (the CLI's
	// sign-in URL; ctx ends with the command); an error fails the test.
	onLine func(ctx context.Context, line string) error
}

// transcriptTimeout bounds one command of a transcript: `make up-…`
// rebuilds the images (seconds when they are built, as in make e2e).
const transcriptTimeout = 10 * time.Minute

// runTranscript runs the doc's transcript of make target and fails the test
// on a command that fails (at once) or prints other than the doc shows (the
// next commands still run, to show every difference).
func runTranscript(t *testing.T, target string, r transcriptRun) {
	t.Helper()
	cmds, ok := docTranscripts(t, r.root)[target]
	if !ok {
		t.Fatalf("no doc of %v has a transcript of make %s (a ```console block starting with `$ make %s`)", transcriptDocs, target, target)
	}
	agenturaCLI(t, r.root) // on PATH for the commands
	// The doc's CLI calls save their files in out/: here a folder of this
	// test's, so that nothing is written into the checkout and a user's own
	// out/ there is neither in the way nor touched (the CLI never
	// overwrites: it would save "x (2).pdf").
	saved := filepath.Join(t.TempDir(), "saved")
	r.subst = append([][2]string{{"--out out", "--out " + saved}, {" out/", " " + saved + "/"}}, r.subst...)
	// A user's shell, not a sub-make of make e2e: without make's variables
	// the make commands print no "make[1]: Entering directory" and take no
	// variables from make e2e's command line.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKE_TERMOUT", "MAKE_TERMERR"}, name)
	})
	env = append(env, "PATH="+filepath.Join(r.root, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		// The CLI's sign-in: no browser started on this machine (the test's
		// onLine signs in), tokens kept in a file of this test's, not the
		// user's config folder.
		"AGENTURA_NO_BROWSER=1", "AGENTURA_TOKEN_FILE="+filepath.Join(t.TempDir(), "oauth-tokens.json"))
	env = append(env, r.env...)
	for _, c := range cmds {
		command := c.command
		for _, s := range r.subst {
			command = strings.ReplaceAll(command, s[0], s[1])
		}
		start := time.Now()
		got, err := r.run(t, command, env)
		t.Logf("%s:%d: %s (%s)", c.file, c.line, strings.ReplaceAll(command, "\\\n", ""), time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("%s:%d: %s: %v\n%s", c.file, c.line, command, err, strings.Join(got, "\n"))
		}
		for i, l := range got {
			for _, s := range slices.Backward(r.subst) {
				l = strings.ReplaceAll(l, s[1], s[0])
			}
			if r.project[1] != "" {
				l = strings.ReplaceAll(l, r.project[1], r.project[0])
			}
			got[i] = l
		}
		if diff := compareOutput(c.want, got); diff != "" {
			t.Errorf("%s:%d: the output of `%s` is not the doc's (- doc, + this run, after the substitutions; rules in transcript_test.go):\n%s\nthe whole output, substituted:\n%s",
				c.file, c.line, c.command, diff, strings.Join(got, "\n"))
		}
	}
}

// run runs command with bash in the checkout, standard output and error
// together, and returns its lines.
func (r transcriptRun) run(t *testing.T, command string, env []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(t.Context(), transcriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir, cmd.Env = r.root, env
	pr, pw, err := os.Pipe()
	must(t, err, "pipe")
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	_, err = procgroup.Start(t, cmd)
	pw.Close()
	if err != nil {
		return nil, err
	}
	var lines []string
	var hookErr error
	sc := bufio.NewScanner(pr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if r.onLine != nil && hookErr == nil {
			if hookErr = r.onLine(ctx, sc.Text()); hookErr != nil {
				cancel()
			}
		}
	}
	err = cmd.Wait()
	if hookErr != nil {
		return lines, hookErr
	}
	return lines, err
}

var (
	sizeRE     = regexp.MustCompile(`\b\d+(\.\d+)? (B|KB|MB|GB)\b`)
	queryRE    = regexp.MustCompile(`([?&][A-Za-z0-9_]+)=[^&\s]*`)
	taskIDRE   = regexp.MustCompile(`\b[A-Z2-7]{26}\b`)
	workingRE  = regexp.MustCompile(`^task \S+ working\b`)
	creatingRE = regexp.MustCompile(`^Creating (\S+) +\.\.\.( done)?$`)
)

// normalizeLine takes out of a line what changes from run to run: sizes
// keep their unit, a URL's query keeps its parameters' names, a task id
// (26 letters and digits of base32) is "<task>".
func normalizeLine(l string) string {
	l = sizeRE.ReplaceAllString(l, "<n> $2")
	l = taskIDRE.ReplaceAllString(l, "<task>")
	return queryRE.ReplaceAllString(l, "$1=…")
}

// compareOutput compares a command's output with the doc's and returns
// their difference, or "" when they agree under the rules above.
func compareOutput(want, got []string) string {
	norm := func(ls []string) []string {
		var out []string
		for _, l := range ls {
			l = normalizeLine(strings.TrimRight(l, " \t\r"))
			if workingRE.MatchString(l) {
				continue // the statuses the CLI happened to poll
			}
			if m := creatingRE.FindStringSubmatch(l); m != nil {
				if m[2] == "" {
					continue // a terminal shows it overwritten by its "... done"
				}
				l = "Creating " + m[1] + " ... done" // padded to the longest name seen so far
			}
			out = append(out, l)
		}
		for len(out) > 0 && out[len(out)-1] == "" {
			out = out[:len(out)-1]
		}
		// Runs of container creations in a sorted order.
		for i := 0; i < len(out); {
			j := i
			for j < len(out) && creatingRE.MatchString(out[j]) {
				j++
			}
			if j > i {
				slices.Sort(out[i:j])
				i = j
			} else {
				i++
			}
		}
		return out
	}
	w, g := norm(want), norm(got)
	if len(w) > 0 && (w[0] == "..." || w[0] == "…") {
		w = w[1:]
		if len(g) > len(w) {
			g = g[len(g)-len(w):]
		}
	}
	if slices.Equal(w, g) {
		return ""
	}
	var b strings.Builder
	for _, l := range w {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	for _, l := range g {
		fmt.Fprintf(&b, "+ %s\n", l)
	}
	return b.String()
}

// TestParseTranscripts checks the reading of transcripts and the rules of the
// comparison on a made-up doc, and that the docs hold one transcript of
// each make up target.
func TestParseTranscripts(t *testing.T) {
	doc := "text\n```console\n$ make up\n...\nCreating p_b_1 ... done\nCreating p_a_1   ... done\nready\n\n" +
		"$ agentura call x \\\n    --json '{}'\nTool produced: a.pdf (PDF, 40 KB)\n  https://h/auth?state=abc&x=1\n```\n"
	got, err := parseTranscripts(doc)
	if err != nil {
		t.Fatal(err)
	}
	up := got["up"]
	if len(up) != 2 || up[1].command != "agentura call x \\\n    --json '{}'" || up[1].line != 9 || len(up[0].want) != 5 {
		t.Fatalf("parsed %+v", got)
	}
	for _, c := range []struct {
		got  []string
		same bool
	}{
		{[]string{"building", "Creating p_a_1 ... \r", "Creating p_b_1 ... \r", "Creating p_a_1 ... done", "Creating p_b_1     ... done\r", "ready"}, true},
		{[]string{"Creating p_b_1 ... done", "Creating p_a_1 ... done", "ready"}, true},
		{[]string{"Creating p_a_1 ... done", "ready"}, false},
		{[]string{"Creating p_a_1 ... done", "Creating p_b_1 ... done", "not ready"}, false},
	} {
		if d := compareOutput(up[0].want, c.got); (d == "") != c.same {
			t.Errorf("%q against the doc: diff %q, want same %v", c.got, d, c.same)
		}
	}
	if d := compareOutput(up[1].want, []string{"task J46L2YK5IVHHQEASFO2ZHDFT63 working: page 1", "Tool produced: a.pdf (PDF, 41 KB)", "  https://h/auth?state=zz&x=2", ""}); d != "" {
		t.Errorf("sizes and query values should not count: %s", d)
	}
	if d := compareOutput(up[1].want, []string{"Tool produced: a.pdf (PDF, 41 MB)", "  https://h/auth?state=zz&x=2"}); d == "" {
		t.Errorf("a size of another unit passed")
	}
	for _, bad := range []string{"```console\nout\n```\n", "```console\n$ ls\n```\n", "```console\n$ make up\n"} {
		if _, err := parseTranscripts(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	blocks := docTranscripts(t, repoRoot(t))
	for target, file := range map[string]string{"up": "docs/deployment.md", "up-auth": "docs/deployment.md", "up-nginx": "docs/deployment.md",
		"up-scale": "docs/deployment.md", "up-trace": "docs/observability.md"} {
		if len(blocks[target]) < 2 {
			t.Errorf("%s: the transcript of make %s has %d command(s), want make and a command that shows it works", file, target, len(blocks[target]))
		} else if blocks[target][0].file != file {
			t.Errorf("the transcript of make %s is in %s, want it in %s", target, blocks[target][0].file, file)
		}
	}
}
