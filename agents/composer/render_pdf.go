package composer

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-pdf/fpdf"

	"github.com/agentura/agentura/agents/composer/fonts"
)

// PDF layout, in millimetres and points.
const (
	pdfMargin     = 20.0
	pdfBodyPt     = 11.0
	pdfLineH      = 5.6
	pdfCodePt     = 9.0
	pdfCodeLineH  = 4.4
	pdfIndent     = 7.0
	pdfCellPad    = 1.5
	pdfPxPerMM    = 96 / 25.4 // pictures are laid out at 96 dpi, then shrunk to fit
	pdfFamily     = "dejavu"
	pdfMonoFamily = "dejavumono"
)

// pdfHeadingPt is the font size of a heading of level 1 to 6.
func pdfHeadingPt(level int) float64 {
	return [...]float64{20, 16, 13.5, 12, 11, 11}[min(max(level, 1), 6)-1]
}

// writePDF renders d as an A4 PDF with the embedded DejaVu fonts and the
// fallback fonts of fb (nil: the embedded fonts alone). It returns the
// characters that no font had, which show as empty boxes, and the pages.
func (d *Document) writePDF(w io.Writer, fb *fonts.Fallback) (missing map[rune]bool, pages int, err error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetMargins(pdfMargin, pdfMargin, pdfMargin)
	pdf.SetAutoPageBreak(true, pdfMargin)
	// Text is laid out run by run (render_text.go): cells hold exactly
	// their text.
	pdf.SetCellMargin(0)
	pdf.AddUTF8FontFromBytes(pdfFamily, "", fonts.Sans)
	pdf.AddUTF8FontFromBytes(pdfFamily, "B", fonts.SansBold)
	pdf.AddUTF8FontFromBytes(pdfFamily, "I", fonts.SansOblique)
	pdf.AddUTF8FontFromBytes(pdfMonoFamily, "", fonts.Mono)
	if d.Title != "" {
		pdf.SetTitle(d.Title, true)
	}
	pdf.SetCreator("agentura composer-agent", true)
	pdf.AliasNbPages("")
	pdf.SetFooterFunc(func() {
		pdf.SetY(-pdfMargin + 6)
		pdf.SetFont(pdfFamily, "", 8)
		pdf.SetTextColor(128, 128, 128)
		pdf.CellFormat(0, 4, strconv.Itoa(pdf.PageNo())+" / {nb}", "", 0, "C", false, 0, "")
		pdf.SetTextColor(0, 0, 0)
	})
	pdf.AddPage()
	r := &pdfRenderer{pdf: pdf, fonts: newPDFFonts(fb)}
	if d.ShowTitle {
		r.text([]styledText{{text: d.Title, style: textStyle{bold: true, size: 24}}}, 10, "")
		pdf.Ln(4)
	}
	r.blocks(d.Blocks, 0)
	if err := pdf.Error(); err != nil {
		return nil, 0, fmt.Errorf("render PDF: %w", err)
	}
	return r.fonts.missing, pdf.PageNo(), pdf.Output(w)
}

// pdfRenderer lays the blocks out on fpdf pages.
type pdfRenderer struct {
	pdf   *fpdf.Fpdf
	fonts *pdfFonts
	// ink is the colour of text other than links.
	ink [3]int
	// atTop is true right after a page break, so that a thematic break at
	// the top of a page does not leave an empty page.
	atTop bool
}

func (r *pdfRenderer) blocks(blocks []Block, indent float64) {
	for _, b := range blocks {
		if r.pdf.Error() != nil {
			return
		}
		r.block(b, indent)
	}
}

func (r *pdfRenderer) block(b Block, indent float64) {
	pdf := r.pdf
	left := pdfMargin + indent
	pdf.SetLeftMargin(left)
	pdf.SetX(left)
	defer pdf.SetLeftMargin(pdfMargin)
	switch b := b.(type) {
	case *Heading:
		size := pdfHeadingPt(b.Level)
		r.keepSpace(size * 0.353 * 3) // a heading does not end a page
		pdf.Ln(size * 0.25)
		r.text(spanTexts(b.Spans, size, true), size*0.5, "")
		pdf.Ln(1.5)
	case *Paragraph:
		r.text(spanTexts(b.Spans, pdfBodyPt, false), pdfLineH, "")
		pdf.Ln(2)
	case *List:
		for i, it := range b.Items {
			r.listItem(b, i, it, indent)
		}
		pdf.Ln(1)
	case *CodeBlock:
		pdf.SetFillColor(242, 242, 242)
		code := strings.ReplaceAll(strings.TrimSuffix(b.Text, "\n"), "\t", "    ")
		code = strings.ReplaceAll(code, "\n", string(lineSep))
		pageW, _ := pdf.GetPageSize()
		width := pageW - left - pdfMargin
		r.drawLines(r.layout([]styledText{{text: code, style: textStyle{mono: true, size: pdfCodePt}}}, width-2*pdfCellPad), left, width, pdfCodeLineH, "L", true)
		pdf.Ln(3)
	case *Quote:
		ink := r.ink
		r.setInk(90, 90, 90)
		r.blocks(b.Blocks, indent+pdfIndent)
		r.setInk(ink[0], ink[1], ink[2])
	case *Table:
		r.table(b, left)
	case *Figure:
		r.figure(b, left)
	case *PageBreak:
		if !r.atTop {
			pdf.AddPage()
		}
	}
	_, r.atTop = b.(*PageBreak)
}

// setInk sets the colour of text.
func (r *pdfRenderer) setInk(red, green, blue int) {
	r.ink = [3]int{red, green, blue}
	r.pdf.SetTextColor(red, green, blue)
}

// keepSpace starts a new page unless h millimetres are left on this one.
func (r *pdfRenderer) keepSpace(h float64) {
	_, pageH := r.pdf.GetPageSize()
	if r.pdf.GetY()+h > pageH-pdfMargin {
		r.pdf.AddPage()
	}
}

func (r *pdfRenderer) listItem(l *List, i int, it ListItem, indent float64) {
	pdf := r.pdf
	marker := "•"
	if l.Ordered {
		marker = strconv.Itoa(l.Start+i) + "."
	}
	marker = cmp.Or(taskBoxes[it.Task], marker)
	pdf.SetFont(pdfFamily, "", pdfBodyPt)
	r.keepSpace(pdfLineH)
	pdf.SetX(pdfMargin + indent)
	pdf.CellFormat(pdfIndent, pdfLineH, marker, "", 0, "L", false, 0, "")
	y := pdf.GetY()
	for j, b := range it.Blocks {
		if j == 0 {
			pdf.SetY(y)
		}
		if p, ok := b.(*Paragraph); ok {
			// Tight items: no space after each paragraph.
			pdf.SetLeftMargin(pdfMargin + indent + pdfIndent)
			pdf.SetX(pdfMargin + indent + pdfIndent)
			r.text(spanTexts(p.Spans, pdfBodyPt, false), pdfLineH, "")
			pdf.SetLeftMargin(pdfMargin)
			continue
		}
		if j == 0 {
			pdf.Ln(pdfLineH)
		}
		r.block(b, indent+pdfIndent)
	}
	if len(it.Blocks) == 0 {
		pdf.Ln(pdfLineH)
	}
}

// table draws a table with columns as wide as their content needs, the
// header repeated on each page it spans.
func (r *pdfRenderer) table(t *Table, left float64) {
	pdf := r.pdf
	pageW, pageH := pdf.GetPageSize()
	avail := pageW - pdfMargin - left
	cols := len(t.Header)
	if cols == 0 {
		return
	}
	const size = 9.5
	const lineH = 4.6
	// Natural widths, then shrunk to fit.
	widths := make([]float64, cols)
	measure := func(cells [][]Span, header bool) {
		for i, c := range cells {
			natural := 0.0
			for _, l := range r.layout(spanTexts(c, size, header), 1e6) {
				natural = max(natural, l.width)
			}
			widths[i] = max(widths[i], min(natural+2*pdfCellPad+1, avail))
		}
	}
	measure(t.Header, true)
	for _, row := range t.Rows {
		measure(row, false)
	}
	total := 0.0
	for _, w := range widths {
		total += w
	}
	if total > avail {
		// Share the width: each column gets its share of the natural width,
		// but never less than an even split's third.
		floor := avail / float64(cols) / 3
		for i := range widths {
			widths[i] = max(floor, widths[i]*avail/total)
		}
		total = 0
		for _, w := range widths {
			total += w
		}
		for i := range widths {
			widths[i] *= avail / total
		}
	}
	var row func(cells [][]Span, header bool)
	row = func(cells [][]Span, header bool) {
		lines := 1
		texts := make([][]textLine, cols)
		for i, c := range cells {
			texts[i] = r.layout(spanTexts(c, size, header), widths[i]-2*pdfCellPad)
			lines = max(lines, len(texts[i]))
		}
		h := float64(lines)*lineH + 2*pdfCellPad
		if pdf.GetY()+h > pageH-pdfMargin {
			pdf.AddPage()
			if !header {
				row(t.Header, true) // the header again on the new page
			}
		}
		y := pdf.GetY()
		x := left
		border := "D"
		if header {
			pdf.SetFillColor(230, 234, 242)
			border = "FD"
		}
		for i := range cells {
			pdf.Rect(x, y, widths[i], h, border)
			pdf.SetXY(x, y+pdfCellPad)
			r.drawLines(texts[i], x+pdfCellPad, widths[i]-2*pdfCellPad, lineH, pdfAlign[t.Align[i]], false)
			x += widths[i]
		}
		pdf.SetXY(left, y+h)
	}
	pdf.SetDrawColor(160, 160, 160)
	row(t.Header, true)
	for _, cells := range t.Rows {
		row(cells, false)
	}
	pdf.SetDrawColor(0, 0, 0)
	pdf.SetFont(pdfFamily, "", pdfBodyPt)
	pdf.Ln(4)
}

// pdfAlign is the drawLines alignment of a column: a column of no stated
// alignment follows each cell's direction.
var pdfAlign = [...]string{AlignLeft: "L", AlignCenter: "C", AlignRight: "R"}

// figure places a picture as wide as it is at 96 dpi, shrunk to the text
// width and to the page height, centred, with its alt text below.
func (r *pdfRenderer) figure(f *Figure, left float64) {
	pdf := r.pdf
	img := f.Image
	pageW, pageH := pdf.GetPageSize()
	availW := pageW - pdfMargin - left
	availH := pageH - 2*pdfMargin - 12 // room for a caption
	w, h := fitBox(float64(img.Width)/pdfPxPerMM, float64(img.Height)/pdfPxPerMM, availW, availH)
	r.keepSpace(h)
	opts := fpdf.ImageOptions{ImageType: strings.ToUpper(img.Format), ReadDpi: false}
	if pdf.GetImageInfo(img.Name) == nil {
		r, err := img.open()
		if err != nil {
			pdf.SetError(fmt.Errorf("picture %q: %w", img.Name, err))
			return
		}
		pdf.RegisterImageOptionsReader(img.Name, opts, r)
		r.Close()
	}
	y := pdf.GetY()
	pdf.ImageOptions(img.Name, left+(availW-w)/2, y, w, h, false, opts, 0, "")
	pdf.SetY(y + h + 1.5)
	if f.Alt != "" {
		ink := r.ink
		r.setInk(90, 90, 90)
		r.text([]styledText{{text: f.Alt, style: textStyle{italic: true, size: 9}}}, 4.5, "C")
		r.setInk(ink[0], ink[1], ink[2])
	}
	pdf.Ln(3)
}
