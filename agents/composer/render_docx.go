package composer

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gomutex/godocx"
	"github.com/gomutex/godocx/common/units"
	"github.com/gomutex/godocx/docx"
	"github.com/gomutex/godocx/wml/stypes"
)

// DOCX layout: godocx's template is US Letter with 1.25" side margins.
const (
	docxMaxW   = 6.0 // inches of text width
	docxMaxH   = 8.0 // inches, leaving room for a caption
	docxDPI    = 96.0
	docxMono   = "Courier New"
	docxCodePt = 9 // points
)

// writeDOCX renders d as a Word document with gomutex/godocx: headings and
// lists in Word's own styles and numbering, so they stay editable.
func (d *Document) writeDOCX(w io.Writer) error {
	doc, err := godocx.NewDocument()
	if err != nil {
		return fmt.Errorf("start DOCX: %w", err)
	}
	r := &docxRenderer{doc: doc}
	if d.ShowTitle {
		if _, err := doc.AddHeading(d.Title, 0); err != nil {
			return fmt.Errorf("render DOCX: %w", err)
		}
	}
	r.blocks(d.Blocks, 0)
	if r.err != nil {
		return fmt.Errorf("render DOCX: %w", r.err)
	}
	if err := doc.Write(w); err != nil {
		return fmt.Errorf("write DOCX: %w", err)
	}
	return nil
}

// docxRenderer adds blocks to a godocx document; the first error sticks.
type docxRenderer struct {
	doc *docx.RootDoc
	err error
}

func (r *docxRenderer) blocks(blocks []Block, level int) {
	for _, b := range blocks {
		if r.err != nil {
			return
		}
		r.block(b, level)
	}
}

func (r *docxRenderer) block(b Block, level int) {
	switch b := b.(type) {
	case *Heading:
		p := r.doc.AddEmptyParagraph()
		p.Style("Heading" + strconv.Itoa(min(max(b.Level, 1), 6)))
		r.spans(p, b.Spans)
	case *Paragraph:
		p := r.doc.AddEmptyParagraph()
		if level > 0 {
			p.Style("ListContinue" + listSuffix(level))
		}
		r.spans(p, b.Spans)
	case *List:
		r.list(b, level)
	case *CodeBlock:
		p := r.doc.AddEmptyParagraph()
		p.Spacing(0, 160)
		for i, line := range strings.Split(strings.ReplaceAll(b.Text, "\t", "    "), "\n") {
			if i > 0 {
				p.AddRun().AddBreak(nil)
			}
			p.AddText(line).Font(docxMono).Size(docxCodePt).Shading(stypes.ShdClear, "auto", "F2F2F2")
		}
	case *Quote:
		for _, inner := range b.Blocks {
			if p, ok := inner.(*Paragraph); ok {
				q := r.doc.AddEmptyParagraph()
				q.Style("Quote")
				r.spans(q, p.Spans)
				continue
			}
			r.block(inner, level)
		}
	case *Table:
		r.table(b)
	case *Figure:
		r.figure(b)
	case *PageBreak:
		r.doc.AddPageBreak()
	}
}

// listSuffix names the style variant of a nesting level: "", "2", "3".
func listSuffix(level int) string {
	if level <= 1 {
		return ""
	}
	return strconv.Itoa(min(level, 3))
}

func (r *docxRenderer) list(l *List, level int) {
	abstract := 2 // bullets
	if l.Ordered {
		abstract = 1 // decimal
	}
	numID := r.doc.NewListInstance(abstract)
	for _, it := range l.Items {
		for j, b := range it.Blocks {
			p, ok := b.(*Paragraph)
			if j > 0 || !ok {
				r.block(b, level+1)
				continue
			}
			para := r.listParagraph(numID, level)
			if box := taskBoxes[it.Task]; box != "" {
				para.AddText(box + " ")
			}
			r.spans(para, p.Spans)
		}
		if len(it.Blocks) == 0 { // an empty item still shows its bullet
			r.listParagraph(numID, level)
		}
	}
}

// listParagraph adds a paragraph numbered as an item of list numID.
func (r *docxRenderer) listParagraph(numID, level int) *docx.Paragraph {
	para := r.doc.AddEmptyParagraph()
	para.Style("ListParagraph")
	para.Numbering(numID, level)
	return para
}

// spans adds styled runs (and hyperlinks) to p.
func (r *docxRenderer) spans(p *docx.Paragraph, spans []Span) {
	for _, s := range spans {
		if s.Break {
			p.AddRun().AddBreak(nil)
			continue
		}
		if s.Link != "" {
			h := p.AddLink(s.Text, s.Link)
			h.Bold(s.Bold).Italic(s.Italic).Strike(s.Strike)
			if s.Code {
				h.Font(docxMono)
			}
			continue
		}
		run := p.AddText(s.Text)
		if s.Bold {
			run.Bold(true)
		}
		if s.Italic {
			run.Italic(true)
		}
		if s.Strike {
			run.Strike(true)
		}
		if s.Code {
			run.Font(docxMono).Shading(stypes.ShdClear, "auto", "F2F2F2")
		}
	}
}

func (r *docxRenderer) table(t *Table) {
	tbl := r.doc.AddTable()
	tbl.Style("TableGrid")
	row := func(cells [][]Span, header bool) {
		tr := tbl.AddRow()
		for i, c := range cells {
			cell := tr.AddCell()
			if header {
				cell.BackgroundColor("E6EAF2")
				bold := make([]Span, len(c))
				for j, s := range c {
					s.Bold = true
					bold[j] = s
				}
				c = bold
			}
			p := cell.AddEmptyPara()
			switch t.Align[i] {
			case AlignCenter:
				p.Justification(stypes.JustificationCenter)
			case AlignRight:
				p.Justification(stypes.JustificationRight)
			}
			r.spans(p, c)
		}
	}
	row(t.Header, true)
	for _, cells := range t.Rows {
		row(cells, false)
	}
	// Space after the table, which Word otherwise glues to what follows.
	r.doc.AddEmptyParagraph()
}

// figure places a picture at 96 dpi, shrunk to the text width and page
// height, centred, with its alt text as a caption.
func (r *docxRenderer) figure(f *Figure) {
	img := f.Image
	w, h := fitBox(float64(img.Width)/docxDPI, float64(img.Height)/docxDPI, docxMaxW, docxMaxH)
	p := r.doc.AddEmptyParagraph()
	p.Justification(stypes.JustificationCenter)
	if _, err := p.AddPicture(img.Path, units.Inch(w), units.Inch(h)); err != nil {
		r.err = fmt.Errorf("picture %q: %w", img.Name, err)
		return
	}
	if f.Alt != "" {
		c := r.doc.AddEmptyParagraph()
		c.Style("Caption")
		c.Justification(stypes.JustificationCenter)
		c.AddText(f.Alt)
	}
}
