package composer

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/requiretool"

	"golang.org/x/text/unicode/norm"

	"github.com/agentura/agentura/agents/composer/fonts"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// scriptLines are a line of text in each script the composer promises, as
// the markdown gives them (logical order).
var scriptLines = []struct{ script, text string }{
	{"Latin", "Zürich, Kraków"},
	{"Chinese", "东京和北京"},
	{"Japanese", "ひらがなとカタカナ"},
	{"Korean", "한국어 문장"},
	{"Cyrillic", "Привет, мир"},
	{"Greek", "Καλημέρα κόσμε"},
	{"Arabic", "مرحبا بالعالم"},
	{"Hebrew", "שלום עולם"},
	{"Devanagari", "नमस्ते दुनिया"},
}

// systemFallback is the fallback chain of the system's fonts; the test
// fails, naming the packages, when a script has no font there.
func systemFallback(t *testing.T) *fonts.Fallback {
	t.Helper()
	fb := fonts.NewFallback(nil)
	for _, probe := range []rune{'东', 'ひ', '한', 'न'} {
		if fb.Face(probe) == nil {
			t.Fatalf("no font for %q in %v: install the Debian packages fonts-noto-core and fonts-droid-fallback (.ci/apt.d/composer.txt)", probe, fonts.DefaultDirs)
		}
	}
	return fb
}

// TestScriptsPDF renders a line in each script and reads the PDF back two
// ways: pdftotext must give each line in logical order, and the rasterised
// page must show, for each line, as many distinct glyph shapes as the line
// has distinct letters — a .notdef box drawn for each missing glyph would
// make the shapes of different characters the same.
func TestScriptsPDF(t *testing.T) {
	fb := systemFallback(t)
	var md strings.Builder
	for _, l := range scriptLines {
		md.WriteString(l.text + "\n\n")
	}
	doc := Parse([]byte(md.String()), "")
	path := filepath.Join(t.TempDir(), "scripts.pdf")
	var missing map[rune]bool
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if missing, err = doc.Render(f, "pdf", fb); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if len(missing) > 0 {
		t.Errorf("characters without a font: %q", missingList(missing))
	}
	text := pdfText(t, path)
	for _, l := range scriptLines {
		if !strings.Contains(normalizeForms(text), l.text) {
			t.Errorf("%s: pdftotext lacks %q in logical order; it reads:\n%s", l.script, l.text, text)
		}
	}
}

// normalizeForms reads pdftotext's output as a reader's search does:
// pdftotext gives Arabic in its presentation forms (the characters drawn),
// which NFKC maps back to the letters, and wraps right-to-left lines in
// embedding marks (U+202B ... U+202C).
func normalizeForms(s string) string {
	return strings.NewReplacer("\u202B", "", "\u202C", "").Replace(norm.NFKC.String(s))
}

// TestScriptsInk rasterises a one-line PDF per script and counts the
// distinct shapes of ink on the line: a line drawn in real glyphs has many,
// a line of .notdef boxes (shown here with code points no font has) has one.
func TestScriptsInk(t *testing.T) {
	fb := systemFallback(t)
	shapes := func(text string) (int, map[rune]bool) {
		path := filepath.Join(t.TempDir(), "line.pdf")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		missing, err := Parse([]byte(text), "").Render(f, "pdf", fb)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		return distinctShapes(rasterise(t, path, 150)), missing
	}
	boxes, missing := shapes("\u0378\u0379\u0380\u0381\u0382")
	if boxes != 1 || len(missing) != 5 {
		t.Fatalf("five unassigned code points give %d distinct shapes and %d missing characters; want 1 (the .notdef box) and 5", boxes, len(missing))
	}
	for _, l := range scriptLines {
		n, missing := shapes(l.text)
		if n < 2 || len(missing) > 0 {
			t.Errorf("%s %q: %d distinct shapes of ink, missing %q; want at least 2 (a line of boxes has 1) and none", l.script, l.text, n, missingList(missing))
		}
	}
}

// distinctShapes counts the different shapes of ink in the top half of a
// page (below it is the footer): blobs separated by blank columns, each
// cropped to its ink; two blobs are the same shape when their sizes differ
// by a pixel at most and their ink by a tenth at most (the same glyph lands
// on the pixel grid a little differently at each place).
func distinctShapes(img image.Image) int {
	b := img.Bounds()
	top, bottom := b.Min.Y, b.Min.Y+b.Dy()/2
	ink := func(x, y int) bool {
		g := color.GrayModel.Convert(img.At(x, y)).(color.Gray)
		return g.Y < 128
	}
	colInk := func(x int) bool {
		for y := top; y < bottom; y++ {
			if ink(x, y) {
				return true
			}
		}
		return false
	}
	type shape struct{ w, h, ink int }
	var seen []shape
	for x := b.Min.X; x < b.Max.X; {
		if !colInk(x) {
			x++
			continue
		}
		x0 := x
		for x < b.Max.X && colInk(x) {
			x++
		}
		y0, y1 := bottom, top
		for y := top; y < bottom; y++ {
			for xx := x0; xx < x; xx++ {
				if ink(xx, y) {
					y0, y1 = min(y0, y), max(y1, y+1)
				}
			}
		}
		sh := shape{w: x - x0, h: y1 - y0}
		for y := y0; y < y1; y++ {
			for xx := x0; xx < x; xx++ {
				if ink(xx, y) {
					sh.ink++
				}
			}
		}
		same := func(o shape) bool {
			return abs(o.w-sh.w) <= 1 && abs(o.h-sh.h) <= 1 && abs(o.ink-sh.ink)*10 <= max(o.ink, sh.ink)
		}
		if !slices.ContainsFunc(seen, same) {
			seen = append(seen, sh)
		}
	}
	return len(seen)
}

func abs(n int) int { return max(n, -n) }

// rasterise renders page 1 of a PDF at dpi with pdftoppm (grey) and returns it.
func rasterise(t *testing.T, path string, dpi int) image.Image {
	t.Helper()
	bin := requiretool.Command(t, "pdftoppm", "apt-get install poppler-utils")
	out := filepath.Join(t.TempDir(), "page")
	if b, err := procgroup.CombinedOutput(exec.Command(bin, "-r", strconv.Itoa(dpi), "-gray", "-aa", "no", "-aaVector", "no", "-png", "-singlefile", path, out)); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, b)
	}
	f, err := os.Open(out + ".png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestMissingGlyphNote: compose_document says which characters no font has,
// in which script, and what to do — never silent boxes. The fonts come from
// AGENT_FONT_DIRS, here an empty folder, so only the embedded DejaVu fonts
// are there: Cyrillic renders, Chinese does not.
func TestMissingGlyphNote(t *testing.T) {
	t.Setenv("AGENT_FONT_DIRS", t.TempDir())
	svc := newService(t, Limits{})
	res, err := invoke(t, svc, "compose_document", map[string]any{"markdown": "Привет 東京 🙂"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 character(s) have no font", `Han: '京' (U+4EAC), '東' (U+6771)`, "beyond the Basic Multilingual Plane", "AGENT_FONT_DIRS", "fonts-droid-fallback"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the result lacks %q:\n%s", want, res.Text)
		}
	}
	if got := res.Structured()["missing_glyphs"]; got != "京東🙂" {
		t.Errorf("missing_glyphs = %v, want 京東🙂 (in code point order)", got)
	}
	if strings.Contains(res.Text, "Привет") || strings.Contains(res.Text, "(U+041F)") {
		t.Errorf("Cyrillic reported missing:\n%s", res.Text)
	}

	// With the system's fonts, nothing is missing but the emoji.
	t.Setenv("AGENT_FONT_DIRS", "")
	systemFallback(t)
	res, err = invoke(t, newService(t, Limits{}), "compose_document", map[string]any{"markdown": "Привет 東京"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text, "no font") {
		t.Errorf("with the system fonts, the result still reports missing characters:\n%s", res.Text)
	}
}
