package composer

// Helpers that read produced documents back with real readers: pdftotext and
// pdfimages (poppler-utils) for PDF, LibreOffice for DOCX and PPTX (converted
// to PDF, then read as PDF). A file those programs reject fails the test; a
// missing program fails it too, saying what to install.

import (
	"archive/zip"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// pdfText returns the text of a PDF as pdftotext reads it; pages are
// separated by form feeds.
func pdfText(t testing.TB, path string) string {
	t.Helper()
	bin := requiretool.Command(t, "pdftotext", "apt-get install poppler-utils")
	out, err := procgroup.CombinedOutput(exec.Command(bin, "-enc", "UTF-8", path, "-"))
	if err != nil {
		t.Fatalf("pdftotext %s: %v\n%s", path, err, out)
	}
	return string(out)
}

// pdfPages returns the number of pages pdftotext sees.
func pdfPages(text string) int {
	return strings.Count(strings.TrimRight(text, "\f"), "\f") + 1
}

// pdfImages returns the number of images pdfimages lists in a PDF.
func pdfImages(t testing.TB, path string) int {
	t.Helper()
	bin := requiretool.Command(t, "pdfimages", "apt-get install poppler-utils")
	out, err := procgroup.CombinedOutput(exec.Command(bin, "-list", path))
	if err != nil {
		t.Fatalf("pdfimages -list %s: %v\n%s", path, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	n := 0
	for _, l := range lines[min(2, len(lines)):] { // two header lines
		if f := strings.Fields(l); len(f) > 2 && f[2] == "image" {
			n++
		}
	}
	return n
}

// officeMu serialises LibreOffice: one soffice at a time per test binary,
// sharing officeProfile, the private profile of this test run (made by
// TestMain), so that only the first conversion pays for creating it.
var (
	officeMu      sync.Mutex
	officeProfile string
)

// testTemp is a folder for the whole test run (LibreOffice profile, built
// agent), removed at its end.
var testTemp string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "composer-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testTemp = dir
	officeProfile = filepath.Join(dir, "libreoffice-profile")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// officeToPDF converts a DOCX or PPTX to PDF with LibreOffice headless, with
// a private profile, and returns the PDF's path. LibreOffice writes no PDF
// for a file it cannot open, which fails the test.
func officeToPDF(t testing.TB, path string) string {
	t.Helper()
	bin := requiretool.Command(t, "soffice", "apt-get install libreoffice-writer-nogui libreoffice-impress-nogui")
	officeMu.Lock()
	defer officeMu.Unlock()
	outDir := t.TempDir()
	cmd := exec.Command(bin, "--headless", "--norestore", "-env:UserInstallation=file://"+officeProfile,
		"--convert-to", "pdf", "--outdir", outDir, path)
	cmd.Env = append(os.Environ(), "HOME="+officeProfile)
	out, err := procgroup.CombinedOutput(cmd) // LibreOffice forks: its group goes with the test binary
	pdf := filepath.Join(outDir, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))+".pdf")
	if _, statErr := os.Stat(pdf); err != nil || statErr != nil {
		t.Fatalf("LibreOffice could not convert %s to PDF (%v): %s", filepath.Base(path), err, out)
	}
	return pdf
}

// zipMembers checks a zip archive's integrity (every member read to its end,
// CRCs checked) and returns its members' names.
func zipMembers(t testing.TB, path string) []string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("%s is not a zip archive: %v", path, err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s: open member %s: %v", path, f.Name, err)
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(rc); err != nil {
			t.Fatalf("%s: member %s is damaged: %v", path, f.Name, err)
		}
		rc.Close()
		names = append(names, f.Name)
	}
	return names
}

// textPNG draws label in black on a coloured w×h background with the Go
// font and encodes it as PNG.
func textPNG(t testing.TB, label string, w, h int, bg color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{bg}, image.Point{}, draw.Src)
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		t.Fatal(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: float64(h) / 4, DPI: 72})
	if err != nil {
		t.Fatal(err)
	}
	defer face.Close()
	d := &font.Drawer{Dst: img, Src: image.Black, Face: face, Dot: fixed.P(w/20, h/2)}
	d.DrawString(label)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testImage writes a PNG showing label into dir and loads it as an embed
// named name.
func testImage(t testing.TB, dir, name, label string, w, h int) *Image {
	t.Helper()
	slot := filepath.Join(dir, fmt.Sprintf("in-%s", name))
	if err := os.MkdirAll(slot, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(slot, name)
	if err := os.WriteFile(path, textPNG(t, label, w, h, color.RGBA{R: 200, G: 220, B: 250, A: 255}), 0o600); err != nil {
		t.Fatal(err)
	}
	img, err := loadImage(name, name, path, "image/png", DefaultLimits().ImagePixels, nil)
	if err != nil {
		t.Fatalf("load test image %s: %v", name, err)
	}
	return img
}
