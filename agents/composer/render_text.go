package composer

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/go-pdf/fpdf"

	"github.com/agentura/agentura/agents/composer/fonts"
	"github.com/agentura/agentura/agents/composer/rtl"
)

// Text in a PDF goes through the small layout engine of this file, because
// fpdf draws a string in one font and in the order given: it maps each
// character through the font's cmap and applies no OpenType shaping (no GSUB,
// no GPOS). So the text of a block is cut into runs of one style, one font
// and one direction, each font being the first of the chain (the embedded
// DejaVu font of the style, DejaVu Sans, then the fallback fonts found in
// AGENT_FONT_DIRS) that has the character; Arabic is shaped into its
// presentation forms first (package rtl); lines are broken at spaces (and
// between Chinese or Japanese characters, which have none); each line's runs
// are put in visual order by the bidi algorithm and drawn one after another.
// Scripts whose shaping needs GSUB beyond one form per letter, such as
// Devanagari's conjuncts and vowel-sign reordering, get the font's glyphs in
// logical order, unshaped.

// lineSep stands for a hard line break inside a block's text: a line
// separator, which the bidi algorithm treats as white space.
const lineSep = '\u2028'

// textStyle is how a run of text is drawn.
type textStyle struct {
	mono, bold, italic, strike bool
	link                       string
	size                       float64
}

// atom is a piece of a line: text of one style, one font and one bidi level.
type atom struct {
	text  string
	style textStyle
	font  string // fpdf family
	level uint8
	width float64
	space bool // white space only: dropped at a line's end
}

// textLine is a laid-out line: its atoms in logical order, their width, and
// whether the paragraph runs right to left.
type textLine struct {
	atoms []atom
	width float64
	rtl   bool
}

// pdfFonts is the font chain of one PDF: the embedded DejaVu faces, the
// fallback chain, and the fallback faces registered with fpdf so far.
type pdfFonts struct {
	sans, bold, oblique, mono *fonts.Face
	fallback                  *fonts.Fallback
	families                  map[*fonts.Face]string
	faces                     map[string]*fonts.Face // by fpdf family, for coverage
	missing                   map[rune]bool
}

func newPDFFonts(fb *fonts.Fallback) *pdfFonts {
	face := func(data []byte) *fonts.Face {
		f, _ := fonts.ParseFace("", data)
		return f
	}
	pf := &pdfFonts{sans: face(fonts.Sans), bold: face(fonts.SansBold), oblique: face(fonts.SansOblique),
		mono: face(fonts.Mono), fallback: fb, families: map[*fonts.Face]string{}, missing: map[rune]bool{}}
	pf.faces = map[string]*fonts.Face{pdfFamily: pf.sans, pdfMonoFamily: pf.mono}
	return pf
}

// embedded is the embedded face and fpdf family of a style.
func (pf *pdfFonts) embedded(st textStyle) (*fonts.Face, string) {
	switch {
	case st.mono:
		return pf.mono, pdfMonoFamily
	case st.bold:
		return pf.bold, pdfFamily
	case st.italic:
		return pf.oblique, pdfFamily
	}
	return pf.sans, pdfFamily
}

// family returns the fpdf family that draws r in style st (registering a
// fallback font with pdf on first use) and whether it is the style's own.
// A character no font has is drawn with the style's font, and remembered
// for the note in the tool's result.
func (pf *pdfFonts) family(pdf *fpdf.Fpdf, st textStyle, r rune) string {
	own, fam := pf.embedded(st)
	if own.Has(r) || r == lineSep {
		return fam
	}
	if st.mono && pf.sans.Has(r) {
		return pdfFamily
	}
	var face *fonts.Face
	if pf.fallback != nil {
		face = pf.fallback.Face(r)
	}
	if face == nil {
		pf.missing[r] = true
		return fam
	}
	name, ok := pf.families[face]
	if !ok {
		name = fmt.Sprintf("fallback%d", len(pf.families))
		pdf.AddUTF8FontFromBytes(name, "", face.Data)
		pf.families[face] = name
		pf.faces[name] = face
	}
	return name
}

// fpdfStyle is the fpdf style string of a run drawn in family.
func fpdfStyle(st textStyle, family string) string {
	s := ""
	if family == pdfFamily {
		switch {
		case st.bold:
			s = "B"
		case st.italic:
			s = "I"
		}
	}
	if st.strike {
		s += "S"
	}
	if st.link != "" {
		s += "U"
	}
	return s
}

// styledText is logical text with a style, before layout.
type styledText struct {
	text  string
	style textStyle
}

// spanTexts turns spans into styled texts of size, bold throughout when
// bold is set; a hard break becomes lineSep.
func spanTexts(spans []Span, size float64, bold bool) []styledText {
	var out []styledText
	for _, s := range spans {
		if s.Break {
			out = append(out, styledText{text: string(lineSep), style: textStyle{size: size}})
			continue
		}
		out = append(out, styledText{text: s.Text, style: textStyle{
			mono: s.Code, bold: (s.Bold || bold) && !s.Code, italic: s.Italic && !s.Bold && !bold && !s.Code,
			strike: s.Strike, link: s.Link, size: size,
		}})
	}
	return out
}

// layout breaks texts into lines at most width wide.
func (r *pdfRenderer) layout(texts []styledText, width float64) []textLine {
	// The characters, shaped, with the style of each.
	var runes []rune
	var styles []int
	for i, t := range texts {
		for _, c := range rtl.Shape(t.text) {
			if c > 0xFFFF { // fpdf indexes fonts by 16-bit codes
				r.fonts.missing[c] = true
				c = '\uFFFD'
			}
			runes = append(runes, c)
			styles = append(styles, i)
		}
	}
	if len(runes) == 0 {
		return nil
	}
	levels := rtl.Levels(runes)
	paraRTL := !rtl.LeftToRight(runes)

	// Words: a break is allowed after white space and around characters of
	// scripts written without spaces. Each word is a list of atoms.
	type word struct {
		atoms []atom
		width float64
		hard  bool // a line break
	}
	var words []word
	var cur word
	var piece []rune
	var pieceStyle, pieceLevel = -1, uint8(0)
	pieceFont := ""
	flushPiece := func() {
		if len(piece) == 0 {
			return
		}
		st := texts[pieceStyle].style
		a := atom{text: string(piece), style: st, font: pieceFont, level: pieceLevel}
		a.space = strings.TrimSpace(a.text) == ""
		r.pdf.SetFont(pieceFont, fpdfStyle(st, pieceFont), st.size)
		a.width = r.pdf.GetStringWidth(a.text)
		cur.atoms = append(cur.atoms, a)
		cur.width += a.width
		piece = piece[:0]
	}
	flushWord := func() {
		flushPiece()
		if len(cur.atoms) > 0 || cur.hard {
			words = append(words, cur)
		}
		cur = word{}
	}
	for i, c := range runes {
		if c == lineSep {
			flushWord()
			words = append(words, word{hard: true})
			continue
		}
		st := texts[styles[i]].style
		fam := pieceFont
		// White space and shared punctuation stay in the font at hand when
		// it has them.
		shared := unicode.IsSpace(c) || unicode.Is(unicode.Common, c)
		if !shared || fam == "" || styles[i] != pieceStyle || !r.fonts.faces[fam].Has(c) {
			fam = r.fonts.family(r.pdf, st, c)
		}
		wide := noSpaceScript(c)
		if wide && len(piece)+len(cur.atoms) > 0 {
			flushWord()
		}
		if styles[i] != pieceStyle || fam != pieceFont || levels[i] != pieceLevel {
			flushPiece()
			pieceStyle, pieceFont, pieceLevel = styles[i], fam, levels[i]
		}
		piece = append(piece, c)
		if unicode.IsSpace(c) || wide {
			flushWord()
		}
	}
	flushWord()

	// Greedy filling; a word wider than a line is cut between characters.
	var lines []textLine
	line := textLine{rtl: paraRTL}
	endLine := func() {
		for len(line.atoms) > 0 && line.atoms[len(line.atoms)-1].space {
			line.width -= line.atoms[len(line.atoms)-1].width
			line.atoms = line.atoms[:len(line.atoms)-1]
		}
		lines = append(lines, line)
		line = textLine{rtl: paraRTL}
	}
	for _, w := range words {
		switch {
		case w.hard:
			endLine()
			continue
		case line.width+w.width <= width || len(line.atoms) == 0 && w.width <= width:
		case len(line.atoms) > 0 && trimmedWidth(w.atoms) <= width:
			endLine()
		default:
			for _, a := range w.atoms {
				for _, part := range r.cut(a, width-line.width, width) {
					if line.width+part.width > width && len(line.atoms) > 0 {
						endLine()
					}
					line.atoms = append(line.atoms, part)
					line.width += part.width
				}
			}
			continue
		}
		if len(line.atoms) == 0 && len(w.atoms) > 0 && w.atoms[0].space {
			continue // no white space at a line's start
		}
		line.atoms = append(line.atoms, w.atoms...)
		line.width += w.width
	}
	if len(line.atoms) > 0 {
		endLine()
	}
	return lines
}

// trimmedWidth is the width of atoms without white space at their end.
func trimmedWidth(atoms []atom) float64 {
	w := 0.0
	for _, a := range atoms {
		w += a.width
	}
	for i := len(atoms) - 1; i >= 0 && atoms[i].space; i-- {
		w -= atoms[i].width
	}
	return w
}

// cut splits an atom wider than a line into parts: the first at most first
// wide, the others at most width.
func (r *pdfRenderer) cut(a atom, first, width float64) []atom {
	r.pdf.SetFont(a.font, fpdfStyle(a.style, a.font), a.style.size)
	var parts []atom
	limit := first
	var part []rune
	w := 0.0
	for _, c := range a.text {
		cw := r.pdf.GetStringWidth(string(c))
		if w+cw > limit && len(part) > 0 {
			parts = append(parts, atom{text: string(part), style: a.style, font: a.font, level: a.level, width: w})
			part, w, limit = part[:0], 0, width
		}
		part = append(part, c)
		w += cw
	}
	return append(parts, atom{text: string(part), style: a.style, font: a.font, level: a.level, width: w})
}

// noSpaceScript reports whether r belongs to a script written without
// spaces between words, where a line may break between any two characters.
func noSpaceScript(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) ||
		r >= 0x3000 && r <= 0x303F || r >= 0xFF00 && r <= 0xFFEF
}

// drawLines draws lines from the current position down, lineH apart, in a
// box from the left margin width wide, aligned by align ("L", "C", "R"; ""
// is the paragraph's own side). When fill is set, each line's box is
// filled first with the fill colour. Lines that do not fit on the page go
// to the next one.
func (r *pdfRenderer) drawLines(lines []textLine, x, width, lineH float64, align string, fill bool) {
	pdf := r.pdf
	_, pageH := pdf.GetPageSize()
	_, _, _, bottom := pdf.GetMargins()
	for _, l := range lines {
		if pdf.GetY()+lineH > pageH-bottom {
			pdf.AddPage()
		}
		y := pdf.GetY()
		if fill {
			pdf.Rect(x, y, width, lineH, "F")
		}
		cx := x
		switch {
		case align == "C":
			cx += (width - l.width) / 2
		case align == "R" || align == "" && l.rtl:
			cx += width - l.width
		}
		r.drawLine(l, cx, y, lineH)
		pdf.SetXY(x, y+lineH)
	}
}

// drawLine draws a line's atoms in visual order from x.
func (r *pdfRenderer) drawLine(l textLine, x, y, lineH float64) {
	pdf := r.pdf
	levels := make([]uint8, len(l.atoms))
	for i, a := range l.atoms {
		levels[i] = a.level
	}
	for _, i := range rtl.Order(levels) {
		a := l.atoms[i]
		text := a.text
		if a.level%2 == 1 {
			text = rtl.Reverse(text)
		}
		pdf.SetFont(a.font, fpdfStyle(a.style, a.font), a.style.size)
		if a.style.link != "" {
			pdf.SetTextColor(20, 70, 160)
		} else {
			pdf.SetTextColor(r.ink[0], r.ink[1], r.ink[2])
		}
		pdf.SetXY(x, y)
		pdf.CellFormat(a.width, lineH, text, "", 0, "L", false, 0, a.style.link)
		x += a.width
	}
	pdf.SetTextColor(r.ink[0], r.ink[1], r.ink[2])
}

// text lays out and draws texts from the current position down, across the
// width between the left and right margins.
func (r *pdfRenderer) text(texts []styledText, lineH float64, align string) {
	left, _, right, _ := r.pdf.GetMargins()
	pageW, _ := r.pdf.GetPageSize()
	width := pageW - left - right
	r.drawLines(r.layout(texts, width), left, width, lineH, align, false)
}

// missingList is the characters of missing, in order, as a string.
func missingList(missing map[rune]bool) string {
	return string(slices.Sorted(maps.Keys(missing)))
}

// missingNote describes the characters no font had, for the tool's result:
// which ones, in which scripts, and what to install. It is empty when every
// character had a font.
func missingNote(missing map[rune]bool, dirs []string) string {
	if len(missing) == 0 {
		return ""
	}
	chars := []rune(missingList(missing))
	byScript := map[string][]string{}
	var scripts []string
	for _, c := range chars {
		s := fonts.Script(c)
		if c > 0xFFFF {
			s = "beyond the Basic Multilingual Plane (emoji, historic scripts), which the PDF writer cannot draw; shown as �"
		}
		if _, ok := byScript[s]; !ok {
			scripts = append(scripts, s)
		}
		if len(byScript[s]) < 10 {
			byScript[s] = append(byScript[s], fmt.Sprintf("%q (U+%04X)", c, c))
		}
	}
	var parts, pkgs []string
	for _, s := range scripts {
		parts = append(parts, s+": "+strings.Join(byScript[s], ", "))
		pkg := "fonts-noto-core"
		if s == "Han" || s == "Hiragana" || s == "Katakana" || s == "Hangul" {
			pkg = "fonts-droid-fallback"
		}
		if !slices.Contains(pkgs, pkg) {
			pkgs = append(pkgs, pkg)
		}
	}
	return fmt.Sprintf("%d character(s) have no font here and show as empty boxes in the PDF — %s. "+
		"Put a TrueType (.ttf) font covering them in one of AGENT_FONT_DIRS (%s), e.g. from the Debian package(s) "+
		"%s, or choose docx or html, which the reader's fonts draw.",
		len(chars), strings.Join(parts, "; "), strings.Join(dirs, ":"), strings.Join(pkgs, ", "))
}
