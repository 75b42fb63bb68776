package composer

import (
	"cmp"
	"io"
	"strings"

	"github.com/agentura/agentura/agents/composer/pptx"
)

// Slide capacity: beyond these a section continues on a new slide.
const (
	slideMaxLines    = 12 // estimated lines of body text
	slideLineChars   = 70 // characters per line of a full-width text box
	slideMaxPictures = 4
)

// writePPTX renders d as a presentation: a title slide, then one slide per
// # or ## section and per `---`; deeper headings, paragraphs and lists become
// the slide's text, pictures sit beside it, a table gets its own slide.
// A section too long for one slide continues on the next, titled "… (cont.)".
// It returns the number of slides.
func (d *Document) writePPTX(w io.Writer) (slides int, err error) {
	deck, err := d.deck()
	if err != nil {
		return 0, err
	}
	return deck.Len(), deck.Write(w)
}

// deck builds the slides of d, refusing (before anything is encoded) a
// deck over d.MaxSlides.
func (d *Document) deck() (*pptx.Presentation, error) {
	deck := &pptx.Presentation{Title: d.Title}
	b := &deckBuilder{deck: deck}
	if d.Title != "" {
		deck.AddSlide(&pptx.Slide{TitleSlide: true, Title: d.Title})
	}
	blocks := d.Blocks
	if !d.ShowTitle && d.Title != "" && d.opensWithTitle() {
		// The opening # heading is the title slide already.
		blocks = blocks[1:]
		b.cur = &pptx.Slide{Title: d.Title}
	}
	for _, blk := range blocks {
		b.block(blk, 0)
		if d.MaxSlides > 0 && deck.Len() > d.MaxSlides {
			break // refused below; building the rest would cost memory for nothing
		}
	}
	b.flush()
	if d.MaxSlides > 0 && deck.Len() > d.MaxSlides {
		return nil, pagesError(deck.Len(), d.MaxSlides, "slides", "# and ## headings, page breaks (---) and text per section")
	}
	return deck, nil
}

// deckBuilder fills slides section by section.
type deckBuilder struct {
	deck  *pptx.Presentation
	cur   *pptx.Slide
	lines int // estimated lines on cur
}

// flush ends the current slide; an empty one is dropped.
func (b *deckBuilder) flush() {
	if s := b.cur; s != nil && (len(s.Paragraphs) > 0 || s.Table != nil || len(s.Pictures) > 0) {
		b.deck.AddSlide(s)
	}
	b.cur, b.lines = nil, 0
}

// slide returns the current slide, starting one if there is none.
func (b *deckBuilder) slide() *pptx.Slide {
	if b.cur == nil {
		b.cur = &pptx.Slide{}
	}
	return b.cur
}

// continueSlide starts a new slide continuing the current one's section.
func (b *deckBuilder) continueSlide() {
	title := ""
	if b.cur != nil {
		title = b.cur.Title
	}
	b.flush()
	if title != "" && !strings.HasSuffix(title, " (cont.)") {
		title += " (cont.)"
	}
	b.cur = &pptx.Slide{Title: title}
}

// room makes sure the current slide can take lines more lines of text.
func (b *deckBuilder) room(lines int) {
	s := b.slide()
	max := slideMaxLines
	if len(s.Pictures) > 0 {
		max = slideMaxLines * 3 / 4
	}
	if s.Table != nil || b.lines > 0 && b.lines+lines > max {
		b.continueSlide()
	}
	b.lines += lines
}

func (b *deckBuilder) add(p pptx.Paragraph) {
	n := 0
	for _, r := range p.Runs {
		n += len([]rune(r.Text))
	}
	b.room(1 + n/slideLineChars)
	b.cur.Paragraphs = append(b.cur.Paragraphs, p)
}

func (b *deckBuilder) block(blk Block, level int) {
	switch blk := blk.(type) {
	case *Heading:
		if blk.Level <= 2 && level == 0 {
			b.flush()
			b.cur = &pptx.Slide{Title: plainText(blk.Spans)}
			return
		}
		b.add(pptx.Paragraph{Runs: pptxRuns(blk.Spans), Level: level, Heading: true})
	case *Paragraph:
		b.add(pptx.Paragraph{Runs: pptxRuns(blk.Spans), Level: level})
	case *List:
		for i, it := range blk.Items {
			for j, inner := range it.Blocks {
				p, ok := inner.(*Paragraph)
				if j > 0 || !ok {
					b.block(inner, level+1)
					continue
				}
				para := pptx.Paragraph{Runs: pptxRuns(p.Spans), Level: level, Bullet: pptx.Dot}
				if blk.Ordered {
					para.Bullet, para.Number = pptx.Number, blk.Start+i
				}
				if box := taskBoxes[it.Task]; box != "" {
					para.Runs = append([]pptx.Run{{Text: box + " "}}, para.Runs...)
				}
				b.add(para)
			}
		}
	case *CodeBlock:
		for _, line := range strings.Split(strings.ReplaceAll(blk.Text, "\t", "    "), "\n") {
			b.add(pptx.Paragraph{Runs: []pptx.Run{{Text: cmp.Or(line, " ")}}, Level: level, Mono: true})
		}
	case *Quote:
		for _, inner := range blk.Blocks {
			if p, ok := inner.(*Paragraph); ok {
				runs := pptxRuns(p.Spans)
				for i := range runs {
					runs[i].Italic = true
				}
				b.add(pptx.Paragraph{Runs: runs, Level: level + 1})
				continue
			}
			b.block(inner, level+1)
		}
	case *Table:
		s := b.slide()
		if s.Table != nil || len(s.Pictures) > 0 || b.lines > slideMaxLines/3 {
			b.continueSlide()
			s = b.cur
		}
		t := &pptx.Table{}
		for _, c := range blk.Header {
			t.Header = append(t.Header, pptxRuns(c))
		}
		for _, row := range blk.Rows {
			var cells [][]pptx.Run
			for _, c := range row {
				cells = append(cells, pptxRuns(c))
			}
			t.Rows = append(t.Rows, cells)
		}
		s.Table = t
	case *Figure:
		s := b.slide()
		if len(s.Pictures) >= slideMaxPictures || s.Table != nil {
			b.continueSlide()
			s = b.cur
		}
		img := blk.Image
		s.Pictures = append(s.Pictures, pptx.Picture{Open: img.open, Format: img.Format, Width: img.Width, Height: img.Height, Descr: blk.Alt})
	case *PageBreak:
		b.flush()
	}
}

func pptxRuns(spans []Span) []pptx.Run {
	runs := make([]pptx.Run, 0, len(spans))
	for _, s := range spans {
		runs = append(runs, pptx.Run(s)) // the same fields: a run is a span
	}
	return runs
}
