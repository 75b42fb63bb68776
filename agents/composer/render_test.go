package composer

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentura/agentura/filetype"
)

// sampleMarkdown exercises every block type, non-Latin scripts and two
// pictures; `---` starts a new page (slide).
const sampleMarkdown = "# Quarterly Report\n\n" +
	"Intro with **bold**, *italic*, ~~struck~~, `code` and a [link](https://example.com/).\n\n" +
	"Кириллица: Привет, мир. Ελληνικά: Καλημέρα κόσμε.\n\n" +
	"## Highlights\n\n" +
	"- First point\n- Second point\n  - Nested point\n- [x] Done task\n\n" +
	"1. Step one\n2. Step two\n\n" +
	"![Revenue chart](chart.png)\n\n" +
	"## Figures\n\n" +
	"| Region | Revenue | Growth |\n|:--|--:|:-:|\n| North | 1200 | 5% |\n| Юг | 900 | 3% |\n\n" +
	"```go\nfunc main() {\n\tprintln(\"hello\")\n}\n```\n\n" +
	"> A quoted remark.\n\n" +
	"---\n\n" +
	"## Appendix\n\n" +
	"Closing words.\n\n" +
	"![](logo.png)\n"

// sampleDoc parses sampleMarkdown and binds its two pictures.
func sampleDoc(t testing.TB) *Document {
	t.Helper()
	dir := t.TempDir()
	images := map[string]*Image{
		"chart.png": testImage(t, dir, "chart.png", "CHART", 480, 240),
		"logo.png":  testImage(t, dir, "logo.png", "LOGO", 200, 200),
	}
	images["logo.png"].Description = "Company logo"
	doc := Parse([]byte(sampleMarkdown), "")
	if err := doc.bind(images); err != nil {
		t.Fatal(err)
	}
	addDescriptions(doc)
	return doc
}

// render writes doc in format into a temp file and returns its path.
func render(t testing.TB, doc *Document, format string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sample."+format)
	if err := writeFile(path, func(w2 io.Writer) error { return doc.Write(w2, format) }); err != nil {
		t.Fatalf("render %s: %v", format, err)
	}
	return path
}

// wantText checks that text holds each of want (whitespace-normalised).
func wantText(t *testing.T, what, text string, want ...string) {
	t.Helper()
	norm := strings.Join(strings.Fields(text), " ")
	for _, w := range want {
		if !strings.Contains(norm, w) {
			t.Errorf("%s lacks %q; it reads:\n%s", what, w, text)
		}
	}
}

// sampleWords are texts every page format must show.
var sampleWords = []string{"Quarterly Report", "Highlights", "First point", "Nested point", "Step two",
	"Привет, мир", "Καλημέρα κόσμε", "Region", "Юг", "1200", "println", "A quoted remark", "Appendix", "Closing words"}

func checkMIME(t *testing.T, path, want string) {
	t.Helper()
	got, err := filetype.DetectFile(path, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("%s detected as %q, want %q", filepath.Base(path), got, want)
	}
}

func TestRenderPDF(t *testing.T) {
	path := render(t, sampleDoc(t), "pdf")
	checkMIME(t, path, "application/pdf")
	text := pdfText(t, path)
	wantText(t, "PDF", text, sampleWords...)
	wantText(t, "PDF", text, "Revenue chart", "Company logo")
	if n := pdfImages(t, path); n != 2 {
		t.Errorf("PDF holds %d images, want 2", n)
	}
	// The "---" starts the appendix on a page of its own.
	pages := strings.Split(text, "\f")
	if len(pages) < 2 || !strings.Contains(pages[len(pages)-2], "Appendix") || strings.Contains(pages[0], "Appendix") {
		t.Errorf("want the appendix on a new page; pages: %q", pages)
	}
}

func TestRenderDOCX(t *testing.T) {
	path := render(t, sampleDoc(t), "docx")
	checkMIME(t, path, "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
	members := zipMembers(t, path)
	if n := countPrefix(members, "word/media/"); n != 2 {
		t.Errorf("DOCX has %d media files, want 2: %v", n, members)
	}
	pdf := officeToPDF(t, path)
	text := pdfText(t, pdf)
	wantText(t, "DOCX (via LibreOffice)", text, sampleWords...)
	if n := pdfImages(t, pdf); n != 2 {
		t.Errorf("DOCX shows %d images in LibreOffice, want 2", n)
	}
	if pdfPages(text) < 2 {
		t.Errorf("DOCX has %d page(s); the --- must start a new one", pdfPages(text))
	}
}

func TestRenderPPTX(t *testing.T) {
	path := render(t, sampleDoc(t), "pptx")
	checkMIME(t, path, "application/vnd.openxmlformats-officedocument.presentationml.presentation")
	members := zipMembers(t, path)
	if n := countPrefix(members, "ppt/media/"); n != 2 {
		t.Errorf("PPTX has %d media files, want 2: %v", n, members)
	}
	slides := countPrefix(members, "ppt/slides/slide")
	pdf := officeToPDF(t, path)
	text := pdfText(t, pdf)
	wantText(t, "PPTX (via LibreOffice)", text, sampleWords...)
	if n := pdfImages(t, pdf); n != 2 {
		t.Errorf("PPTX shows %d images in LibreOffice, want 2", n)
	}
	// Title slide, Quarterly Report (intro), Highlights, Figures (text),
	// Figures (table), Appendix.
	if pages := pdfPages(text); pages != slides || slides < 5 {
		t.Errorf("PPTX has %d slide parts and LibreOffice shows %d slides; want the same, at least 5", slides, pages)
	}
	// Each slide starts with its title.
	for _, title := range []string{"Highlights", "Figures", "Appendix"} {
		if !regexp.MustCompile(`(^|\f)\s*` + title).MatchString(text) {
			t.Errorf("no slide starts with the title %q:\n%s", title, text)
		}
	}
}

func TestRenderHTML(t *testing.T) {
	path := render(t, sampleDoc(t), "html")
	checkMIME(t, path, "text/html; charset=utf-8")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if n := strings.Count(page, `<img src="data:image/png;base64,`); n != 2 {
		t.Errorf("page has %d inline PNG images, want 2", n)
	}
	for _, want := range []string{"<title>Quarterly Report</title>", "<h2>Highlights</h2>", "<strong>bold</strong>", "<del>struck</del>",
		`<a href="https://example.com/">link</a>`, `<td style="text-align:right">1200</td>`, "Привет, мир", `class="language-go"`, "<hr>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "src=\"chart.png\"") || strings.Contains(page, "http") && strings.Contains(page, "<script") {
		t.Errorf("page refers to outside files or runs scripts")
	}
}

// TestRenderMarkdown checks that the Markdown written parses back to the
// same document, with pictures referred to as images/<name>.
func TestRenderMarkdown(t *testing.T) {
	doc := sampleDoc(t)
	var buf bytes.Buffer
	if err := doc.writeMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	back := Parse(buf.Bytes(), "")
	figs := figures(back.Blocks)
	if len(figs) != 2 || figs[0].Ref != "images/chart.png" || figs[1].Ref != "images/logo.png" {
		t.Fatalf("pictures refer to %v, want images/chart.png and images/logo.png; markdown:\n%s", figs, buf.String())
	}
	// Same tree once the references are bound.
	for i, f := range figs {
		f.Ref, f.Image = figures(doc.Blocks)[i].Ref, figures(doc.Blocks)[i].Image
	}
	if got, want := dump(back.Blocks), dump(doc.Blocks); got != want {
		t.Errorf("markdown does not parse back to the same document:\n got %s\nwant %s\nmarkdown:\n%s", got, want, buf.String())
	}
}

func countPrefix(names []string, prefix string) int {
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, prefix) && !strings.HasSuffix(name, "/") && !strings.Contains(name[len(prefix):], "/") {
			n++
		}
	}
	return n
}

// dump is a readable form of blocks, for comparisons.
func dump(blocks []Block) string {
	var b strings.Builder
	var walk func([]Block)
	walk = func(bs []Block) {
		for _, blk := range bs {
			switch blk := blk.(type) {
			case *Heading:
				b.WriteString("H" + string(rune('0'+blk.Level)) + spansDump(blk.Spans))
			case *Paragraph:
				b.WriteString("P" + spansDump(blk.Spans))
			case *List:
				b.WriteString("L[")
				for _, it := range blk.Items {
					b.WriteString("I" + it.Task + "(")
					walk(it.Blocks)
					b.WriteString(")")
				}
				b.WriteString("]")
			case *Table:
				b.WriteString("T" + strings.Repeat("c", len(blk.Header)))
				for _, r := range blk.Rows {
					for _, c := range r {
						b.WriteString(spansDump(c))
					}
				}
			case *CodeBlock:
				b.WriteString("C" + blk.Lang + "{" + blk.Text + "}")
			case *Quote:
				b.WriteString("Q(")
				walk(blk.Blocks)
				b.WriteString(")")
			case *Figure:
				b.WriteString("F{" + blk.Ref + "|" + blk.Alt + "}")
			case *PageBreak:
				b.WriteString("---")
			}
			b.WriteString(" ")
		}
	}
	walk(blocks)
	return b.String()
}

func spansDump(spans []Span) string {
	var parts []string
	for _, s := range spans {
		style := ""
		for _, f := range []struct {
			on bool
			c  string
		}{{s.Bold, "b"}, {s.Italic, "i"}, {s.Strike, "s"}, {s.Code, "c"}, {s.Link != "", "l"}, {s.Break, "br"}} {
			if f.on {
				style += f.c
			}
		}
		parts = append(parts, style+":"+s.Text)
	}
	return "<" + strings.Join(parts, "|") + ">"
}
