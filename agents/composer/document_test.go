package composer

import (
	"io"
	"strings"
	"testing"

	"github.com/agentura/agentura/agents/composer/fonts"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, md, title string
		want            string // dump of the blocks
		wantTitle       string
		showTitle       bool
	}{
		{"TitleFromHeading", "# Report\n\ntext", "", "H1<:Report> P<:text> ", "Report", false},
		{"GivenTitleShown", "## Part\n\ntext", "Annual", "H2<:Part> P<:text> ", "Annual", true},
		{"GivenTitleSameAsHeading", "# Annual\n", "Annual", "H1<:Annual> ", "Annual", false},
		{"Styles", "a **b** *c* ~~d~~ `e` [f](https://x.test/) <https://y.test/>", "",
			"P<:a |b:b|: |i:c|: |s:d|: |c:e|: |l:f|: |l:https://y.test/> ", "", false},
		{"EscapesAndEntities", `\*not bold\* &amp; &copy; &#65;`, "", "P<:*not bold* & © A> ", "", false},
		{"HardBreak", "one  \ntwo\\\nthree", "", "P<:one|br:|:two|br:|:three> ", "", false},
		{"SoftBreakIsSpace", "one\ntwo", "", "P<:one two> ", "", false},
		{"InlineImageLifted", "before ![alt](pic.png) after", "", "P<:before  after> F{pic.png|alt} ", "", false},
		{"ImageRefUnescaped", "![](./my%20chart.png)", "", "F{my chart.png|} ", "", false},
		{"Lists", "3. a\n4. b\n\n- [ ] t\n- [x] u\n  - v", "",
			"L[I(P<:a> )I(P<:b> )] L[Itodo(P<:t> )Idone(P<:u> L[I(P<:v> )] )] ", "", false},
		{"TableRagged", "| a | b |\n|---|--:|\n| 1 |\n| 2 | 3 | 4 |", "", "Tcc<:1><><:2><:3> ", "", false},
		{"CodeAndRule", "```sh\necho hi\n```\n\n---\n\n    indented", "", "Csh{echo hi} --- C{indented} ", "", false},
		{"HTMLKeptAsText", "<div>raw</div>\n\n<!-- gone -->\n\nx <b>y</b>", "", "Chtml{<div>raw</div>} P<:x <b>y</b>> ", "", false},
		{"Quote", "> quoted *text*", "", "Q(P<:quoted |i:text> ) ", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := Parse([]byte(tc.md), tc.title)
			if got := dump(doc.Blocks); got != tc.want {
				t.Errorf("blocks = %s\n   want %s", got, tc.want)
			}
			if doc.Title != tc.wantTitle || doc.ShowTitle != tc.showTitle {
				t.Errorf("title %q (show %v), want %q (show %v)", doc.Title, doc.ShowTitle, tc.wantTitle, tc.showTitle)
			}
		})
	}
}

func TestOrderedListStart(t *testing.T) {
	l := Parse([]byte("7. seven\n8. eight"), "").Blocks[0].(*List)
	if !l.Ordered || l.Start != 7 {
		t.Errorf("list ordered %v start %d, want ordered from 7", l.Ordered, l.Start)
	}
}

func TestBind(t *testing.T) {
	dir := t.TempDir()
	chart := testImage(t, dir, "chart.png", "C", 40, 20)
	images := map[string]*Image{"chart.png": chart}

	doc := Parse([]byte("![a](chart.png) ![b](images/chart.png)"), "")
	if err := doc.bind(images); err != nil {
		t.Fatal(err)
	}
	if imgs := doc.Images(); len(imgs) != 1 || imgs[0] != chart {
		t.Errorf("Images() = %v, want chart.png once", imgs)
	}

	err := Parse([]byte("![](chart.png)\n\n![](missing.png)"), "").bind(images)
	if err == nil || !strings.Contains(err.Error(), `"missing.png"`) || !strings.Contains(err.Error(), `the embeds given are "chart.png"`) {
		t.Errorf("error %v; want it to name missing.png and list chart.png", err)
	}
	err = Parse([]byte("![](x.png)"), "").bind(map[string]*Image{})
	if err == nil || !strings.Contains(err.Error(), "the call has no embeds") {
		t.Errorf("error %v; want it to say there are no embeds", err)
	}
}

func TestOutputName(t *testing.T) {
	for _, tc := range []struct{ requested, title, format, want string }{
		{"", "", "pdf", "document.pdf"},
		{"report", "", "docx", "report.docx"},
		{"report.PDF", "", "pdf", "report.pdf"},
		{"report.md", "", "html", "report.html"},
		{"../../etc/passwd", "", "md", "passwd.md"},
		{"", "Quarterly Report: Q3/2026!", "pptx", "quarterly-report-q3-2026.pptx"},
		{"", "Отчёт за год", "pdf", "отчёт-за-год.pdf"},
	} {
		if got := outputName(tc.requested, tc.title, tc.format); got != tc.want {
			t.Errorf("outputName(%q, %q, %q) = %q, want %q", tc.requested, tc.title, tc.format, got, tc.want)
		}
	}
}

// Parse parses Markdown into a Document with goldmark and its GitHub
// extensions alone, no budget: the reference ParseLimited is held to, and
// the parse of tests whose Markdown is their own.
func Parse(markdown []byte, title string) *Document {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	return build(markdown, md.Parser().Parse(text.NewReader(markdown)), title)
}

// Write renders d in format (one of Formats) to w; PDF text has the
// embedded fonts alone.
func (d *Document) Write(w io.Writer, format string) error {
	_, err := d.Render(w, format, nil)
	return err
}

// Render is Write with fb as the fallback chain of PDF text, for characters
// the embedded fonts lack (nil: none). It returns the characters of a PDF
// that no font had, which show as empty boxes.
func (d *Document) Render(w io.Writer, format string, fb *fonts.Fallback) (missing map[rune]bool, err error) {
	stats, err := d.render(w, format, fb)
	return stats.missing, err
}
