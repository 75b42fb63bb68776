package composer

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchDoc is a document of about 20 PDF pages with 10 pictures: 20
// sections of headings, paragraphs, a list, and a table or code block, a
// picture in every other section, a `---` after each.
func benchInput(b testing.TB) (string, map[string]*Image) {
	b.Helper()
	dir := b.TempDir()
	images := map[string]*Image{}
	for i := range 10 {
		name := fmt.Sprintf("figure%02d.png", i)
		slot := filepath.Join(dir, name)
		if err := os.MkdirAll(slot, 0o700); err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(slot, name)
		bg := color.RGBA{R: uint8(100 + 15*i), G: 200, B: 240, A: 255}
		if err := os.WriteFile(path, textPNG(b, fmt.Sprintf("Figure %d", i), 800, 450, bg), 0o600); err != nil {
			b.Fatal(err)
		}
		img, err := loadImage(name, name, path, "image/png", DefaultLimits().ImagePixels, nil)
		if err != nil {
			b.Fatal(err)
		}
		images[name] = img
	}
	var md strings.Builder
	md.WriteString("# Benchmark report\n\n")
	para := strings.Repeat("Lorem ipsum dolor sit amet, **consectetur** adipiscing elit, sed do *eiusmod* tempor incididunt ut labore. ", 6)
	for s := range 20 {
		fmt.Fprintf(&md, "## Section %d\n\n%s\n\n%s\n\n- point one\n- point two\n  - nested\n- point three\n\n", s+1, para, para)
		if s%2 == 0 {
			fmt.Fprintf(&md, "![Figure %d](figure%02d.png)\n\n", s/2, s/2)
			md.WriteString("| Key | Value | Note |\n|---|--:|---|\n| alpha | 1 | Привет |\n| beta | 2 | Καλημέρα |\n\n")
		} else {
			md.WriteString("```go\nfunc f(x int) int {\n\treturn x * 2\n}\n```\n\n" + para + "\n\n")
		}
		md.WriteString("---\n\n")
	}
	return md.String(), images
}

// BenchmarkCompose renders the 20-page, 10-picture document in each format
// (parsing included, once per op, as a call does).
func BenchmarkCompose(b *testing.B) {
	md, images := benchInput(b)
	for _, format := range Formats() {
		b.Run(format, func(b *testing.B) {
			b.ReportAllocs()
			var size int64
			for b.Loop() {
				doc := Parse([]byte(md), "")
				if err := doc.bind(images); err != nil {
					b.Fatal(err)
				}
				cw := &countWriter{}
				if err := doc.Write(cw, format); err != nil {
					b.Fatal(err)
				}
				size = cw.n
			}
			b.ReportMetric(float64(size)/1e6, "MB/doc")
		})
	}
}

// countWriter counts bytes and drops them.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// TestBenchDocument keeps the benchmark honest: its document is at least 20
// pages as a PDF, with 10 pictures.
func TestBenchDocument(t *testing.T) {
	md, images := benchInput(t)
	doc := Parse([]byte(md), "")
	if err := doc.bind(images); err != nil {
		t.Fatal(err)
	}
	path := render(t, doc, "pdf")
	if pages := pdfPages(pdfText(t, path)); pages < 20 {
		t.Errorf("benchmark document is %d pages, want at least 20", pages)
	}
	if n := pdfImages(t, path); n != 10 {
		t.Errorf("benchmark document has %d pictures, want 10", n)
	}
}
