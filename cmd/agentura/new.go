package main

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"text/template"
)

// scaffold holds the files `agentura new` writes, as templates with [[ ]]
// delimiters (Go code, Makefiles and compose files use braces themselves).
//
//go:embed scaffold
var scaffold embed.FS

// scaffoldData is what the templates are filled with.
type scaffoldData struct {
	Module    string // the new module's path
	Name      string // the agent's name: the binary, the image, the compose service
	Port      int
	GoVersion string
	Replace   string // an absolute path to a local agentura checkout, or ""
	Version   string // the published agentura version to require, or "" (go get ...@latest adds it)
}

// scaffoldNames maps a template's path to the file it becomes.
var scaffoldNames = map[string]string{"gitignore.tmpl": ".gitignore"}

// validName is what an agent's name may be: it names a binary, an image and
// a compose service.
var validName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

const newUsage = "agentura new DIR --module PATH [--replace LOCAL_CHECKOUT] [--name NAME] [--port PORT]"

// runNew scaffolds an agent module in a new folder.
func runNew(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("new", newUsage, stderr)
	module := fs.String("module", "", "the new module's path, e.g. example.com/you/myagent (required)")
	replace := fs.String("replace", "", "a local checkout of agentura to build against (a replace directive in go.mod)")
	name := fs.String("name", "", "the agent's name (binary, image, compose service); default: DIR's base name")
	port := fs.Int("port", 8000, "the agent's default port")
	// DIR may come before the flags or after them.
	var dir string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if dir == "" && fs.NArg() > 0 {
		dir = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentura new: unexpected arguments %q\n  %s\n", fs.Args(), newUsage)
		return exitUsage
	}
	if dir == "" || *module == "" {
		fmt.Fprintf(stderr, "agentura new: give the folder and --module\n  %s\n", newUsage)
		return exitUsage
	}
	*name = cmp.Or(*name, strings.ToLower(filepath.Base(filepath.Clean(dir))))
	if !validName.MatchString(*name) {
		fmt.Fprintf(stderr, "agentura new: %q is not a usable agent name: use lower-case letters, digits and dashes, starting with a letter (--name)\n", *name)
		return exitUsage
	}
	if *port < 1 || *port > 65535 {
		fmt.Fprintf(stderr, "agentura new: --port %d is not a TCP port\n", *port)
		return exitUsage
	}
	data := scaffoldData{Module: *module, Name: *name, Port: *port, GoVersion: goVersion(), Version: releaseVersion()}
	var seedSum []byte
	if *replace != "" {
		abs, err := filepath.Abs(*replace)
		if err == nil {
			var mod []byte
			mod, err = os.ReadFile(filepath.Join(abs, "go.mod"))
			if err == nil && !strings.HasPrefix(string(mod), "module github.com/agentura/agentura\n") {
				err = errors.New("its go.mod is not the module github.com/agentura/agentura")
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "agentura new: --replace %s is not a checkout of agentura: %v\n", *replace, err)
			return exitUsage
		}
		data.Replace, data.Version = abs, ""
		// The checkout's go.sum holds every module the agent can need: with
		// it, go mod tidy works offline from the module cache.
		seedSum, _ = os.ReadFile(filepath.Join(abs, "go.sum"))
	}
	if err := writeScaffold(dir, data, seedSum); err != nil {
		fmt.Fprintf(stderr, "agentura new: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "Created the agent %s in %s (module %s).\n\n  cd %s\n", data.Name, dir, data.Module, dir)
	if data.Replace == "" && data.Version == "" {
		fmt.Fprintf(stdout, "  go get github.com/agentura/agentura@latest   # or: agentura new ... --replace /path/to/agentura\n")
	}
	fmt.Fprintf(stdout, "  go mod tidy\n  make test    # the agent in-process: no ports\n  make run     # MCP at http://localhost:%d/mcp\n  make up      # the image, under docker compose\n", data.Port)
	fmt.Fprint(stdout, "\n"+slowFirstTest+"\n")
	return exitOK
}

// slowFirstTest is what `agentura new` says of the first `make test`, as
// the scaffold's README does: said before it is slow, not found out.
const slowFirstTest = "The first make test builds agentura and its dependencies with the race detector (-race):\n" +
	"a few minutes on a small machine (2 cores), seconds afterwards from Go's build cache."

// writeScaffold writes the module into dir, which must not exist or be
// empty: nothing of the user's is ever overwritten.
func writeScaffold(dir string, data scaffoldData, seedSum []byte) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty; give a new folder", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	err := fs.WalkDir(scaffold, "scaffold", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(path, "scaffold/")
		out, ok := scaffoldNames[rel]
		if !ok {
			out = strings.TrimSuffix(rel, ".tmpl")
		}
		text, err := scaffold.ReadFile(path)
		if err != nil {
			return err
		}
		tmpl, err := template.New(rel).Delims("[[", "]]").Option("missingkey=error").Parse(string(text))
		if err != nil {
			return fmt.Errorf("template %s: %w", rel, err)
		}
		target := filepath.Join(dir, filepath.FromSlash(out))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if err := tmpl.Execute(f, data); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", out, err)
		}
		return f.Close()
	})
	if err == nil && len(seedSum) > 0 {
		err = os.WriteFile(filepath.Join(dir, "go.sum"), seedSum, 0o644)
	}
	return err
}

// releaseVersion is the version of agentura this program was built from when
// that is a published release (go install github.com/agentura/agentura/cmd/agentura@v1.2.3
// gives v1.2.3): the new module requires the same one. A build from a
// checkout, a pseudo-version or a modified tree gives "": the printed steps
// then say go get github.com/agentura/agentura@latest.
func releaseVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Path != "github.com/agentura/agentura" || !releaseTag.MatchString(info.Main.Version) ||
		pseudoVersion.MatchString(info.Main.Version) {
		return ""
	}
	return info.Main.Version
}

var (
	// releaseTag is a semantic version with no build suffix ("+dirty").
	releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	// pseudoVersion is the time-and-commit part of a Go pseudo-version.
	pseudoVersion = regexp.MustCompile(`[-.][0-9]{14}-[0-9a-f]{12}$`)
)

// goVersion is the running toolchain's version as a go.mod go line takes
// it ("1.26.8"), or this module's own minimum.
func goVersion() string {
	v := strings.TrimPrefix(runtime.Version(), "go")
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return "1.26.8"
	}
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			return "1.26.8"
		}
	}
	return v
}
