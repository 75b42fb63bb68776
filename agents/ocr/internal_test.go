package ocr

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
)

func TestSplitPages(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"one\n\f", []string{"one"}},
		{"one\n\ftwo\n\f", []string{"one", "two"}},
		{"\fpage two\n\f", []string{"", "page two"}}, // an empty page keeps its place
		{"no separator", []string{"no separator"}},
	} {
		if got := splitPages(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("splitPages(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseLanguages(t *testing.T) {
	out := "List of available languages in \"/usr/share/tesseract-ocr/5/tessdata/\" (3):\neng\nosd\ndeu\n"
	if got := parseLanguages(out); !slices.Equal(got, []string{"deu", "eng"}) {
		t.Errorf("parseLanguages = %q, want [deu eng] (sorted, no osd)", got)
	}
}

func TestParsePDFInfo(t *testing.T) {
	out := "Producer:        FPDF 1.7\nPages:           2\nEncrypted:       no\n" +
		"Page    1 size:  612 x 792 pts (letter)\nPage    1 rot:   0\nPage    2 size:  320.64 x 282.24 pts\n"
	info, err := parsePDFInfo([]byte(out))
	if err != nil || info.pages != 2 || !slices.Equal(info.sizes, [][2]float64{{612, 792}, {320.64, 282.24}}) {
		t.Errorf("parsePDFInfo = %+v, %v", info, err)
	}
	if _, err := parsePDFInfo([]byte("Pages: many\n")); err == nil {
		t.Error("a page count that is no number was accepted")
	}
}

// TestInspectTIFF walks hand-made TIFFs: the pages of a multi-page file are
// counted, and a loop of directories is refused.
func TestInspectTIFF(t *testing.T) {
	a := New(Config{MaxPages: 5})
	dir := t.TempDir()
	write := func(data []byte) string {
		p := filepath.Join(dir, "x.tif")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pages, err := a.inspectTIFF(write(ocrtest.RawTIFF([]ocrtest.Size{{W: 10, H: 20}, {W: 30, H: 40}, {W: 5, H: 5}}, 4, 4)))
	if err != nil || pages != 3 {
		t.Errorf("three-page TIFF: %d pages, %v; want 3", pages, err)
	}

	loop := ocrtest.RawTIFF([]ocrtest.Size{{W: 1, H: 1}, {W: 1, H: 1}}, 1, 1)
	copy(loop[len(loop)-1-4:], []byte{8, 0, 0, 0}) // the last page's "next" points at the first
	if _, err := a.inspectTIFF(write(loop)); !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), "loop") {
		t.Errorf("looping TIFF: %v; want a corrupt-file error about a loop", err)
	}

	big := []byte("II+\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	if _, err := a.inspectTIFF(write(big)); err == nil || !strings.Contains(err.Error(), "BigTIFF") {
		t.Errorf("BigTIFF: %v; want an error naming BigTIFF", err)
	}
}

func TestLoadConfig(t *testing.T) {
	env := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := LoadConfig(lookup)
	if err != nil || cfg.MaxPages != DefaultMaxPages || cfg.MaxPixels != DefaultMaxPixels || cfg.Timeout != DefaultTimeout || cfg.Concurrency < 1 {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
	env = map[string]string{"AGENT_OCR_MAX_PAGES": "7", "AGENT_OCR_CONCURRENCY": "3", "AGENT_OCR_TIMEOUT": "90s", "AGENT_OCR_MAX_PIXELS": "1000"}
	if cfg, err = LoadConfig(lookup); err != nil || cfg.MaxPages != 7 || cfg.Concurrency != 3 || cfg.Timeout != 90*time.Second || cfg.MaxPixels != 1000 {
		t.Errorf("set: %+v, %v", cfg, err)
	}
	env = map[string]string{"AGENT_OCR_MAX_PAGES": "0", "AGENT_OCR_TIMEOUT": "soon"}
	_, err = LoadConfig(lookup)
	var ce *agentcore.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "AGENT_OCR_MAX_PAGES") || !strings.Contains(err.Error(), "AGENT_OCR_TIMEOUT") {
		t.Errorf("bad values: %v; want ConfigErrors naming both variables", err)
	}
}

// TestCommandEnv: the commands get no AGENT_* setting (no signing key, no
// auth secret) and run tesseract single-threaded.
func TestCommandEnv(t *testing.T) {
	t.Setenv("AGENT_SIGNING_KEY", "a-secret-the-parsers-must-not-see")
	t.Setenv("OMP_THREAD_LIMIT", "8")
	e := newEngine(Config{}.withDefaults())
	out, err := e.run(t.Context(), "env")
	if err != nil {
		t.Fatalf("run env: %v", err)
	}
	env := string(out)
	if strings.Contains(env, "AGENT_") || strings.Contains(env, "a-secret") {
		t.Errorf("a command sees the agent's settings:\n%s", env)
	}
	if !strings.Contains(env, "\nOMP_THREAD_LIMIT=1\n") || strings.Contains(env, "OMP_THREAD_LIMIT=8") {
		t.Errorf("OMP_THREAD_LIMIT is not 1 alone:\n%s", env)
	}
	if !strings.Contains(env, "PATH=") {
		t.Errorf("PATH is gone:\n%s", env)
	}
}

// TestLanguagesRefresh: the installed packs are asked for once, and again
// when a call names one not seen, so a pack installed while the agent runs
// is found.
func TestLanguagesRefresh(t *testing.T) {
	installed := []string{"eng"}
	asked := 0
	osd := false
	l := &languages{list: func(context.Context) ([]string, bool, error) {
		asked++
		return slices.Clone(installed), osd, nil
	}}
	ctx := t.Context()
	if got, err := l.check(ctx, nil); err != nil || !slices.Equal(got, []string{"eng"}) || asked != 1 {
		t.Fatalf("default: %v, %v after %d listings; want [eng] after 1", got, err, asked)
	}
	if _, err := l.check(ctx, []string{"eng"}); err != nil || asked != 1 {
		t.Errorf("known language: %v after %d listings; want no new listing", err, asked)
	}
	if _, err := l.check(ctx, []string{"deu"}); err == nil || asked != 2 {
		t.Errorf("missing language: %v after %d listings; want an error after one refresh", err, asked)
	}
	installed = append(installed, "deu") // apt-get install tesseract-ocr-deu
	if got, err := l.check(ctx, []string{" deu ", "eng", "deu"}); err != nil || !slices.Equal(got, []string{"deu", "eng"}) {
		t.Errorf("after installing deu: %v, %v; want [deu eng]", got, err)
	}

	// "auto" needs osd, looked for again before refusing; it stands alone.
	if _, err := l.check(ctx, []string{"auto"}); err == nil || !strings.Contains(err.Error(), "tesseract-ocr-osd") {
		t.Errorf("auto without osd: %v; want an error naming tesseract-ocr-osd", err)
	}
	osd = true // apt-get install tesseract-ocr-osd
	if got, err := l.check(ctx, []string{"auto"}); err != nil || !slices.Equal(got, []string{"auto"}) {
		t.Errorf("auto with osd: %v, %v; want [auto]", got, err)
	}
	if _, err := l.check(ctx, []string{"auto", "eng"}); err == nil || !strings.Contains(err.Error(), "cannot be combined") {
		t.Errorf("auto with eng: %v; want an error", err)
	}
	if got, err := l.forScript(ctx, "Han"); err == nil || !strings.Contains(err.Error(), "tesseract-ocr-chi-sim") {
		t.Errorf("Han without chi_sim: %v, %v; want an error naming tesseract-ocr-chi-sim", got, err)
	}
	installed = append(installed, "chi_sim")
	if got, err := l.forScript(ctx, "Han"); err != nil || !slices.Equal(got, []string{"chi_sim"}) {
		t.Errorf("Han: %v, %v; want [chi_sim]", got, err)
	}
}
