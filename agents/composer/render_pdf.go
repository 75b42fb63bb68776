package composer

import (
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

// writePDF renders d as an A4 PDF with the embedded DejaVu fonts.
func (d *Document) writePDF(w io.Writer) error {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetMargins(pdfMargin, pdfMargin, pdfMargin)
	pdf.SetAutoPageBreak(true, pdfMargin)
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
	r := &pdfRenderer{pdf: pdf}
	if d.ShowTitle {
		pdf.SetFont(pdfFamily, "B", 24)
		pdf.MultiCell(0, 10, pdfSafe(d.Title), "", "L", false)
		pdf.Ln(4)
	}
	r.blocks(d.Blocks, 0)
	if err := pdf.Error(); err != nil {
		return fmt.Errorf("render PDF: %w", err)
	}
	return pdf.Output(w)
}

// pdfRenderer lays the blocks out on fpdf pages.
type pdfRenderer struct {
	pdf *fpdf.Fpdf
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
		r.spans(b.Spans, size, size*0.5, true)
		pdf.Ln(size * 0.5)
		pdf.Ln(1.5)
	case *Paragraph:
		r.spans(b.Spans, pdfBodyPt, pdfLineH, false)
		pdf.Ln(pdfLineH)
		pdf.Ln(2)
	case *List:
		for i, it := range b.Items {
			r.listItem(b, i, it, indent)
		}
		pdf.Ln(1)
	case *CodeBlock:
		pdf.SetFont(pdfMonoFamily, "", pdfCodePt)
		pdf.SetFillColor(242, 242, 242)
		pdf.MultiCell(0, pdfCodeLineH, pdfSafe(strings.ReplaceAll(b.Text, "\t", "    ")), "", "L", true)
		pdf.Ln(3)
	case *Quote:
		pdf.SetTextColor(90, 90, 90)
		r.blocks(b.Blocks, indent+pdfIndent)
		pdf.SetTextColor(0, 0, 0)
	case *Table:
		r.table(b, left)
	case *Figure:
		r.figure(b, left)
	case *PageBreak:
		if !r.atTop {
			pdf.AddPage()
		}
	}
	r.atTop = false
	if _, ok := b.(*PageBreak); ok {
		r.atTop = true
	}
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
	switch it.Task {
	case "todo":
		marker = "☐"
	case "done":
		marker = "☑"
	}
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
			if j == 0 {
				pdf.SetXY(pdfMargin+indent+pdfIndent, y)
			}
			r.spans(p.Spans, pdfBodyPt, pdfLineH, false)
			pdf.Ln(pdfLineH)
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

// spans writes styled text flowing from the current position, wrapping at
// the right margin.
func (r *pdfRenderer) spans(spans []Span, size, lineH float64, bold bool) {
	pdf := r.pdf
	for _, s := range spans {
		if s.Break {
			pdf.Ln(lineH)
			continue
		}
		family, style := pdfFamily, ""
		switch {
		case s.Code:
			family = pdfMonoFamily
		case s.Bold || bold:
			style = "B"
		case s.Italic:
			style = "I"
		}
		if s.Strike {
			style += "S"
		}
		if s.Link != "" {
			style += "U"
			pdf.SetTextColor(20, 70, 160)
		}
		pdf.SetFont(family, style, size)
		// fpdf's Write costs the square of its text's length: long text goes
		// in pieces, which flow on from where the last one ended.
		for _, piece := range pdfPieces(s.Text) {
			if s.Link != "" {
				pdf.WriteLinkString(lineH, piece, s.Link)
			} else {
				pdf.Write(lineH, piece)
			}
		}
		if s.Link != "" {
			pdf.SetTextColor(0, 0, 0)
		}
	}
	pdf.SetFont(pdfFamily, "", pdfBodyPt)
}

// pdfPieceLen is the most runes handed to one fpdf Write.
const pdfPieceLen = 120

// pdfPieces cuts text, made safe for fpdf (pdfSafe), after spaces into
// pieces of about pdfPieceLen runes; a piece without a space is cut anyway.
func pdfPieces(text string) []string {
	text = pdfSafe(text)
	var out []string
	for len(text) > 0 {
		end, n := len(text), 0
		for i := range text {
			if n == pdfPieceLen {
				end = i
				if sp := strings.LastIndexByte(text[:i], ' '); sp > 0 {
					end = sp + 1
				}
				break
			}
			n++
		}
		out = append(out, text[:end])
		text = text[end:]
	}
	return out
}

// pdfSafe replaces characters beyond the Basic Multilingual Plane (emoji,
// rare scripts), which fpdf cannot index in a font and DejaVu does not have,
// with U+FFFD.
func pdfSafe(s string) string {
	for _, r := range s {
		if r > 0xffff {
			return strings.Map(func(r rune) rune {
				if r > 0xffff {
					return '\uFFFD'
				}
				return r
			}, s)
		}
	}
	return s
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
	measure := func(cells [][]Span, style string) {
		pdf.SetFont(pdfFamily, style, size)
		for i, c := range cells {
			widths[i] = max(widths[i], min(pdf.GetStringWidth(pdfSafe(plainText(c)))+2*pdfCellPad+1, avail))
		}
	}
	measure(t.Header, "B")
	for _, row := range t.Rows {
		measure(row, "")
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
		style := ""
		if header {
			style = "B"
		}
		pdf.SetFont(pdfFamily, style, size)
		lines := 1
		texts := make([]string, cols)
		for i, c := range cells {
			texts[i] = pdfSafe(plainText(c))
			lines = max(lines, len(pdf.SplitText(texts[i], widths[i])))
		}
		h := float64(lines)*lineH + 2*pdfCellPad
		if pdf.GetY()+h > pageH-pdfMargin {
			pdf.AddPage()
			if !header {
				row(t.Header, true) // the header again on the new page
				pdf.SetFont(pdfFamily, style, size)
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
			pdf.MultiCell(widths[i], lineH, texts[i], "", pdfAlign(t.Align[i]), false)
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

func pdfAlign(a Align) string {
	switch a {
	case AlignCenter:
		return "C"
	case AlignRight:
		return "R"
	}
	return "L"
}

// figure places a picture as wide as it is at 96 dpi, shrunk to the text
// width and to the page height, centred, with its alt text below.
func (r *pdfRenderer) figure(f *Figure, left float64) {
	pdf := r.pdf
	img := f.Image
	pageW, pageH := pdf.GetPageSize()
	availW := pageW - pdfMargin - left
	availH := pageH - 2*pdfMargin - 12 // room for a caption
	w, h := fitBox(float64(img.Width)/pdfPxPerMM, float64(img.Height)/pdfPxPerMM, availW, availH)
	if pdf.GetY()+h > pageH-pdfMargin {
		pdf.AddPage()
	}
	opts := fpdf.ImageOptions{ImageType: strings.ToUpper(img.Format), ReadDpi: false}
	if pdf.GetImageInfo(img.Name) == nil {
		pdf.RegisterImageOptionsReader(img.Name, opts, img.reader())
	}
	y := pdf.GetY()
	pdf.ImageOptions(img.Name, left+(availW-w)/2, y, w, h, false, opts, 0, "")
	pdf.SetY(y + h + 1.5)
	if f.Alt != "" {
		pdf.SetFont(pdfFamily, "I", 9)
		pdf.SetTextColor(90, 90, 90)
		pdf.MultiCell(0, 4.5, pdfSafe(f.Alt), "", "C", false)
		pdf.SetTextColor(0, 0, 0)
		pdf.SetFont(pdfFamily, "", pdfBodyPt)
	}
	pdf.Ln(3)
}
