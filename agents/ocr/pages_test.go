package ocr_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// TestPagesInParallel: a PDF's pages read side by side give the same text,
// page for page, as one tesseract reading the list of all pages in turn
// (what the agent did before, and the shell's way). Three pages, all at once,
// show it: each is read twice here, so a page more is seconds more.
func TestPagesInParallel(t *testing.T) {
	const pages = 3
	var content [][]string
	for n := range pages {
		content = append(content, benchPage(n + 1)[:4])
	}
	pdf := ocrtest.PDF(t, content...)
	svc, _ := newService(t, ocr.Config{Concurrency: 3})
	res, err := invoke(t, svc, "ocr_document", map[string]any{"source": attachment("doc.pdf", pdf)})
	if err != nil {
		t.Fatal(err)
	}
	got := pageTexts(t, res)

	dir := t.TempDir()
	in := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
		if out, err := procgroup.CombinedOutput(cmd); err != nil {
			t.Fatalf("%s: %v: %s", name, err, out)
		}
	}
	run("pdftoppm", "-r", "300", "-png", "in.pdf", "p")
	images, _ := filepath.Glob(filepath.Join(dir, "p-*.png"))
	slices.Sort(images)
	if err := os.WriteFile(filepath.Join(dir, "pages.txt"), []byte(strings.Join(images, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run("tesseract", "pages.txt", "out", "--dpi", "300", "-l", "eng", "txt")
	raw, err := os.ReadFile(filepath.Join(dir, "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range strings.Split(string(raw), "\f") {
		if p = strings.TrimSpace(p); p != "" {
			want = append(want, p)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages read in parallel:\n%q\nthe sequential run:\n%q", got, want)
	}
	for i, p := range got {
		wantWords(t, "page "+string(rune('1'+i)), p, content[i][0])
	}
}
