package gateway

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func tools(names ...string) []*mcp.Tool {
	var out []*mcp.Tool
	for _, n := range names {
		out = append(out, &mcp.Tool{Name: n})
	}
	return out
}

func TestToolNamesPrefixOnlyClashes(t *testing.T) {
	got := toolNames([]string{"ocr", "composer", "files"}, [][]*mcp.Tool{
		tools("ocr_document", "inspect_file"),
		tools("compose_document", "inspect_file"),
		tools("list_files", "stat"), // clashes with the gateway's own tool
	})
	var names []string
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"compose_document", "composer_inspect_file", "files_list_files", "ocr_document", "ocr_inspect_file", "stat"}
	if !slices.Equal(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
	if r := got["composer_inspect_file"]; r.Agent != 1 || r.Tool.Name != "inspect_file" {
		t.Errorf("composer_inspect_file routes to agent %d tool %s", r.Agent, r.Tool.Name)
	}
	if r := got["ocr_inspect_file"]; r.Agent != 0 || r.Tool.Name != "inspect_file" {
		t.Errorf("ocr_inspect_file routes to agent %d tool %s", r.Agent, r.Tool.Name)
	}
}

func TestNameAgentsDistinctAndSafe(t *testing.T) {
	got := nameAgents([]string{"ocr-agent", "ocr-agent", "my agent!", ""})
	if want := []string{"ocr-agent", "ocr-agent_2", "my_agent", "agent4"}; !slices.Equal(got, want) {
		t.Errorf("agent names %v, want %v", got, want)
	}
}

func TestLoadConfigJSONAndYAML(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "gw.json")
	os.WriteFile(js, []byte(`{"agents": [{"name": "ocr", "url": "http://localhost:8001", "token": "T"}, {"command": ["fileagent", "--stdio"], "env": ["A=1"]}], "roots": ["docs"], "out": "/tmp/x"}`), 0o600)
	yml := filepath.Join(dir, "gw.yaml")
	os.WriteFile(yml, []byte("agents:\n  - name: ocr\n    url: http://localhost:8001\n    token: T\n  - command: [fileagent, --stdio]\n    env: [A=1]\nroots: [docs]\nout: /tmp/x\n"), 0o600)
	for _, p := range []string{js, yml} {
		cfg, err := LoadConfig(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := cfg.check(); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		a := cfg.Agents
		if len(a) != 2 || a[0].URL != "http://localhost:8001/mcp" || a[0].Token != "T" || !slices.Equal(a[1].Command, []string{"fileagent", "--stdio"}) || a[1].Env[0] != "A=1" {
			t.Errorf("%s: agents %+v", p, a)
		}
		if !slices.Equal(cfg.Roots, []string{filepath.Join(dir, "docs")}) || cfg.Out != "/tmp/x" {
			t.Errorf("%s: roots %v out %s", p, cfg.Roots, cfg.Out)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"agents": [], "rootz": []}`), 0o600)
	if _, err := LoadConfig(bad); err == nil || !strings.Contains(err.Error(), "rootz") {
		t.Errorf("unknown field: %v", err)
	}
	both := Config{Agents: []Agent{{URL: "http://x", Command: []string{"y"}}}}
	if err := both.check(); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("url and command: %v", err)
	}
}

func TestRootsKeepNamesInside(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in", "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "in", "sub", "a.txt"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("s"), 0o644)
	os.Symlink(filepath.Join(dir, "secret.txt"), filepath.Join(dir, "in", "link.txt"))
	os.Symlink("sub/a.txt", filepath.Join(dir, "in", "inner-link.txt"))
	r, err := openRoots([]string{filepath.Join(dir, "in")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for _, ok := range []string{"sub/a.txt", filepath.Join(dir, "in", "sub", "a.txt"), "inner-link.txt"} {
		f, err := r.open(ok)
		if err != nil {
			t.Errorf("%s: %v", ok, err)
			continue
		}
		f.Close()
	}
	for _, out := range []string{"../secret.txt", filepath.Join(dir, "secret.txt"), "link.txt", "/etc/passwd"} {
		if f, err := r.open(out); !errors.Is(err, errOutside) {
			if f != nil {
				f.Close()
			}
			t.Errorf("%s: %v, want a refusal (outside the roots)", out, err)
		}
	}
	if _, err := r.open("nope.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("nope.txt: %v, want not found", err)
	}
	if _, err := r.open("sub"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a folder: %v", err)
	}
}

// inline_max_bytes in a configuration file means what --inline-max means:
// 0 sends every file through /uploads, a size is that size, and leaving it
// out is the default (Config.InlineMaxBytes 0).
func TestLoadConfigInlineMax(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		line string
		want int64
	}{{"", 0}, {"inline_max_bytes: 0\n", -1}, {"inline_max_bytes: 4096\n", 4096}} {
		p := filepath.Join(dir, "gw.yaml")
		os.WriteFile(p, []byte("agents: [{url: http://localhost:8001, protocol_version: 2025-11-25}]\n"+tc.line), 0o600)
		cfg, err := LoadConfig(p)
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		if cfg.InlineMaxBytes != tc.want || cfg.Agents[0].ProtocolVersion != "2025-11-25" {
			t.Errorf("%q: InlineMaxBytes %d (want %d), protocol %q", tc.line, cfg.InlineMaxBytes, tc.want, cfg.Agents[0].ProtocolVersion)
		}
	}
	p := filepath.Join(dir, "neg.yaml")
	os.WriteFile(p, []byte("agents: [{url: http://localhost:8001}]\ninline_max_bytes: -5\n"), 0o600)
	if _, err := LoadConfig(p); err == nil || !strings.Contains(err.Error(), "inline_max_bytes -5") {
		t.Errorf("a negative inline_max_bytes: %v", err)
	}
}
