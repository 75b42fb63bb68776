package pptx

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Layout of a content slide, in EMU.
const (
	marginX   = 457200  // 0.5"
	titleY    = 228600  // 0.25"
	titleH    = 1005840 // 1.1"
	bodyY     = 1371600 // 1.5"
	bodyH     = SlideHeight - bodyY - 365760
	bodyW     = SlideWidth - 2*marginX
	gap       = 228600
	bodyPt    = 20
	monoPt    = 14
	headingPt = 24
	tablePt   = 14
	rowH      = 370840
)

// maxStartAt is the largest first number of a:buAutoNum
// (ST_TextBulletStartAtNum, 1..32767); PowerPoint refuses a file beyond it.
const maxStartAt = 32767

// rel is one relationship of a slide part.
type rel struct {
	id, typ, target string
	external        bool
}

// mediaFile is a picture a slide refers to; the presentation names it.
type mediaFile struct {
	rel  *rel
	ext  string
	data []byte
	open func() (io.ReadCloser, error) // instead of data, when set
}

// slideBuilder writes one slide's XML and collects its relationships.
type slideBuilder struct {
	n      int
	rels   []*rel
	media  []mediaFile
	nextID int
	b      strings.Builder
}

func newSlideBuilder(n int) *slideBuilder {
	return &slideBuilder{n: n, nextID: 2}
}

func (sb *slideBuilder) addRel(typ, target string, external bool) *rel {
	r := &rel{id: fmt.Sprintf("rId%d", len(sb.rels)+1), typ: typ, target: target, external: external}
	sb.rels = append(sb.rels, r)
	return r
}

func (sb *slideBuilder) id() int {
	sb.nextID++
	return sb.nextID - 1
}

func (sb *slideBuilder) build(s *Slide) (string, error) {
	layout := "slideLayout2.xml"
	if s.TitleSlide {
		layout = "slideLayout1.xml"
	}
	sb.addRel(relSlideLayout, "../slideLayouts/"+layout, false)
	b := &sb.b
	b.WriteString(xmlHeader + `<p:sld ` + nsDecl + `><p:cSld><p:spTree>` + groupProps)
	if s.TitleSlide {
		sb.placeholder("ctrTitle", "", s.Title, 914400, 1828800, SlideWidth-2*914400, 1600200, 4000)
		if s.Subtitle != "" {
			sb.placeholder("subTitle", ` idx="1"`, s.Subtitle, 914400, 3581400, SlideWidth-2*914400, 1143000, 2400)
		}
	} else {
		if s.Title != "" {
			sb.placeholder("title", "", s.Title, marginX, titleY, bodyW, titleH, 3200)
		}
		if err := sb.content(s); err != nil {
			return "", err
		}
	}
	b.WriteString(`</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>`)
	return b.String(), nil
}

// placeholder writes a title-like placeholder shape with one line of text.
func (sb *slideBuilder) placeholder(typ, idx, text string, x, y, w, h, size int) {
	id := sb.id()
	fmt.Fprintf(&sb.b, `<p:sp><p:nvSpPr><p:cNvPr id="%d" name="%s %d"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr><p:ph type="%s"%s/></p:nvPr></p:nvSpPr>`,
		id, typ, id, typ, idx)
	fmt.Fprintf(&sb.b, `<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></a:xfrm></p:spPr>`, x, y, w, h)
	fmt.Fprintf(&sb.b, `<p:txBody><a:bodyPr><a:normAutofit/></a:bodyPr><a:lstStyle/><a:p><a:r><a:rPr lang="en-US" sz="%d" dirty="0"/><a:t>%s</a:t></a:r></a:p></p:txBody></p:sp>`,
		size, esc(text))
}

// content lays out the body: text (and a table under it) on the left,
// pictures on the right; either takes the whole width when alone.
func (sb *slideBuilder) content(s *Slide) error {
	hasText := len(s.Paragraphs) > 0 || s.Table != nil
	textW, picX, picW := bodyW, marginX, bodyW
	if hasText && len(s.Pictures) > 0 {
		textW = bodyW * 55 / 100
		picX = marginX + textW + gap
		picW = bodyW - textW - gap
	}
	if hasText {
		y, h := bodyY, bodyH
		if s.Table != nil {
			if len(s.Paragraphs) > 0 {
				th := min(estimateHeight(s.Paragraphs, textW), bodyH/2)
				sb.textBox(s.Paragraphs, marginX, y, textW, th)
				y += th + gap/2
				h -= th + gap/2
			}
			sb.table(s.Table, marginX, y, textW, h)
		} else {
			sb.textBox(s.Paragraphs, marginX, y, textW, h)
		}
	}
	if len(s.Pictures) > 0 {
		return sb.pictures(s.Pictures, picX, bodyY, picW, bodyH)
	}
	return nil
}

// estimateHeight guesses the height paragraphs need in a box of width w.
func estimateHeight(ps []Paragraph, w int) int {
	lines := 0
	for _, p := range ps {
		n := 0
		for _, r := range p.Runs {
			n += len([]rune(r.Text))
		}
		perLine := max(1, int(float64(w)/914400*72/(bodyPt*0.55)))
		lines += 1 + n/perLine
	}
	return lines*int(bodyPt*1.25*12700) + 91440
}

func (sb *slideBuilder) textBox(ps []Paragraph, x, y, w, h int) {
	id := sb.id()
	b := &sb.b
	fmt.Fprintf(b, `<p:sp><p:nvSpPr><p:cNvPr id="%d" name="Text %d"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>`, id, id)
	fmt.Fprintf(b, `<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom><a:noFill/></p:spPr>`, x, y, w, h)
	b.WriteString(`<p:txBody><a:bodyPr wrap="square" rtlCol="0"><a:normAutofit/></a:bodyPr><a:lstStyle/>`)
	for _, p := range ps {
		sb.paragraph(p)
	}
	b.WriteString(`</p:txBody></p:sp>`)
}

func (sb *slideBuilder) paragraph(p Paragraph) {
	b := &sb.b
	lvl := min(max(p.Level, 0), 8)
	indent := 342900
	marL, ind, bullet := indent*(lvl+1), -indent, `<a:buNone/>`
	switch {
	case p.Bullet == Dot:
		bullet = `<a:buFont typeface="Arial"/><a:buChar char="` + []string{"•", "–", "◦"}[lvl%3] + `"/>`
	case p.Bullet == Number && p.Number > maxStartAt:
		// Beyond what a:buAutoNum may start at: the number as text.
		p.Runs = append([]Run{{Text: strconv.Itoa(p.Number) + ". "}}, p.Runs...)
	case p.Bullet == Number:
		bullet = fmt.Sprintf(`<a:buFont typeface="+mj-lt"/><a:buAutoNum type="arabicPeriod" startAt="%d"/>`, max(p.Number, 1))
	default:
		marL, ind = indent*lvl, 0
	}
	fmt.Fprintf(b, `<a:p><a:pPr marL="%d" lvl="%d" indent="%d"><a:spcBef><a:spcPts val="600"/></a:spcBef>%s</a:pPr>`, marL, lvl, ind, bullet)
	size := bodyPt
	switch {
	case p.Heading:
		size = headingPt
	case p.Mono:
		size = monoPt
	}
	for _, r := range p.Runs {
		if p.Heading {
			r.Bold = true
		}
		if p.Mono {
			r.Code = true
		}
		sb.run(r, size)
	}
	fmt.Fprintf(b, `<a:endParaRPr lang="en-US" sz="%d" dirty="0"/></a:p>`, size*100)
}

func (sb *slideBuilder) run(r Run, size int) {
	b := &sb.b
	if r.Break {
		fmt.Fprintf(b, `<a:br><a:rPr lang="en-US" sz="%d"/></a:br>`, size*100)
		return
	}
	fmt.Fprintf(b, `<a:r><a:rPr lang="en-US" sz="%d"`, size*100)
	if r.Bold {
		b.WriteString(` b="1"`)
	}
	if r.Italic {
		b.WriteString(` i="1"`)
	}
	if r.Strike {
		b.WriteString(` strike="sngStrike"`)
	}
	b.WriteString(` dirty="0">`)
	if r.Code {
		b.WriteString(`<a:latin typeface="Courier New"/><a:cs typeface="Courier New"/>`)
	}
	if r.Link != "" {
		fmt.Fprintf(b, `<a:hlinkClick r:id="%s"/>`, sb.addRel(relHyperlink, r.Link, true).id)
	}
	fmt.Fprintf(b, `</a:rPr><a:t>%s</a:t></a:r>`, esc(r.Text))
}

func (sb *slideBuilder) table(t *Table, x, y, w, h int) {
	cols := len(t.Header)
	if cols == 0 {
		return
	}
	id := sb.id()
	b := &sb.b
	rows := 1 + len(t.Rows)
	fmt.Fprintf(b, `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="%d" name="Table %d"/><p:cNvGraphicFramePr><a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/></p:nvGraphicFramePr>`, id, id)
	fmt.Fprintf(b, `<p:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></p:xfrm>`, x, y, w, min(h, rows*rowH))
	b.WriteString(`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl><a:tblPr firstRow="1" bandRow="1"/><a:tblGrid>`)
	colW := w / cols
	for range cols {
		fmt.Fprintf(b, `<a:gridCol w="%d"/>`, colW)
	}
	b.WriteString(`</a:tblGrid>`)
	row := func(cells [][]Run, header bool) {
		fmt.Fprintf(b, `<a:tr h="%d">`, rowH)
		for i := range cols {
			var runs []Run
			if i < len(cells) {
				runs = cells[i]
			}
			b.WriteString(`<a:tc><a:txBody><a:bodyPr/><a:lstStyle/><a:p>`)
			for _, r := range runs {
				r.Bold = r.Bold || header
				sb.run(r, tablePt)
			}
			fmt.Fprintf(b, `<a:endParaRPr lang="en-US" sz="%d" dirty="0"/></a:p></a:txBody><a:tcPr>`, tablePt*100)
			for _, side := range []string{"lnL", "lnR", "lnT", "lnB"} {
				fmt.Fprintf(b, `<a:%s w="12700"><a:solidFill><a:srgbClr val="999999"/></a:solidFill></a:%s>`, side, side)
			}
			if header {
				b.WriteString(`<a:solidFill><a:srgbClr val="E6EAF2"/></a:solidFill>`)
			}
			b.WriteString(`</a:tcPr></a:tc>`)
		}
		b.WriteString(`</a:tr>`)
	}
	row(t.Header, true)
	for _, r := range t.Rows {
		row(r, false)
	}
	b.WriteString(`</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`)
}

// pictures lays pictures out in a grid filling the area, each as large as
// its cell allows with its aspect ratio kept, centred in the cell.
func (sb *slideBuilder) pictures(pics []Picture, x, y, w, h int) error {
	n := len(pics)
	cols := int(math.Ceil(math.Sqrt(float64(n))))
	if w < h {
		cols = int(math.Ceil(float64(n) / math.Ceil(math.Sqrt(float64(n)))))
	}
	rows := (n + cols - 1) / cols
	cellW := (w - (cols-1)*gap/2) / cols
	cellH := (h - (rows-1)*gap/2) / rows
	for i, p := range pics {
		ext, ok := map[string]string{"png": "png", "jpeg": "jpeg", "gif": "gif"}[p.Format]
		if !ok {
			return fmt.Errorf("picture %d: format %q: want png, jpeg or gif", i+1, p.Format)
		}
		if p.Width <= 0 || p.Height <= 0 {
			return fmt.Errorf("picture %d: size %d×%d", i+1, p.Width, p.Height)
		}
		// Never enlarge a picture beyond 1.5× its 96-dpi size.
		natW, natH := float64(p.Width)*9525*1.5, float64(p.Height)*9525*1.5
		scale := min(float64(cellW)/natW, float64(cellH)/natH, 1)
		pw, ph := int(natW*scale), int(natH*scale)
		cx := x + (i%cols)*(cellW+gap/2) + (cellW-pw)/2
		cy := y + (i/cols)*(cellH+gap/2) + (cellH-ph)/2
		r := sb.addRel(relImage, "", false)
		sb.media = append(sb.media, mediaFile{rel: r, ext: ext, data: p.Data, open: p.Open})
		id := sb.id()
		fmt.Fprintf(&sb.b, `<p:pic><p:nvPicPr><p:cNvPr id="%d" name="Picture %d" descr="%s"/><p:cNvPicPr><a:picLocks noChangeAspect="1"/></p:cNvPicPr><p:nvPr/></p:nvPicPr>`,
			id, id, esc(p.Descr))
		fmt.Fprintf(&sb.b, `<p:blipFill><a:blip r:embed="%s"/><a:stretch><a:fillRect/></a:stretch></p:blipFill>`, r.id)
		fmt.Fprintf(&sb.b, `<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>`,
			cx, cy, pw, ph)
	}
	return nil
}

// relsXML is the slide's relationships part; picture targets are set by the
// presentation once it has named the media files.
func (sb *slideBuilder) relsXML() string {
	var b strings.Builder
	b.WriteString(xmlHeader + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	for _, r := range sb.rels {
		mode := ""
		if r.external {
			mode = ` TargetMode="External"`
		}
		fmt.Fprintf(&b, `<Relationship Id="%s" Type="%s" Target="%s"%s/>`, r.id, r.typ, esc(r.target), mode)
	}
	b.WriteString(`</Relationships>`)
	return b.String()
}
