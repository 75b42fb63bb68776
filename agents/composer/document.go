package composer

import (
	"bytes"
	"net/url"
	"slices"
	"strings"

	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"
)

// Document is a Markdown text parsed once into the small tree every renderer
// reads: blocks of styled spans. Keeping the renderers off goldmark's AST
// makes each of them a plain walk over a handful of types, and guarantees that
// all formats see the same structure.
type Document struct {
	// Title is the document's title: given by the caller, else the first
	// top-level heading's text. It may be empty.
	Title string
	// ShowTitle is true when the caller gave a title that the Markdown does
	// not already open with: page formats then print it above the text.
	ShowTitle bool
	// Blocks are the document's content in order.
	Blocks []Block
	// MaxSlides, when positive, is the most slides a PPTX rendering may
	// have: a deck over it is refused before it is encoded.
	MaxSlides int
}

// Block is one of *Heading, *Paragraph, *List, *Table, *CodeBlock, *Quote,
// *Figure, *PageBreak.
type Block interface{ isBlock() }

// Heading is a heading of level 1 to 6.
type Heading struct {
	Level int
	Spans []Span
}

// Paragraph is running text.
type Paragraph struct{ Spans []Span }

// List is a bulleted or numbered list.
type List struct {
	Ordered bool
	Start   int // first number of an ordered list
	Items   []ListItem
}

// ListItem is one entry of a list; it may hold paragraphs, nested lists,
// code and figures.
type ListItem struct {
	Blocks []Block
	// Task is "" for an ordinary item, "todo" or "done" for a GFM task item.
	Task string
}

// Align is a table column's alignment.
type Align int

// Column alignments.
const (
	AlignNone Align = iota
	AlignLeft
	AlignCenter
	AlignRight
)

// Table is a GFM table: a header row and body rows of styled cells.
type Table struct {
	Align  []Align
	Header [][]Span
	Rows   [][][]Span
}

// CodeBlock is preformatted text, shown in a monospace font.
type CodeBlock struct {
	Lang string
	Text string
}

// Quote is a block quote.
type Quote struct{ Blocks []Block }

// Figure is an image on a line of its own. Images written inside running
// text become figures after their paragraph part, since none of the page
// formats flows text around pictures.
type Figure struct {
	// Ref is the reference as written in the Markdown (an embed's name).
	Ref string
	// Alt is the image's alternative text.
	Alt string
	// Image is the embed Ref names; set by Document.bind.
	Image *Image
}

// taskBoxes is the check box that PDF, DOCX and PPTX show for a ListItem.Task.
var taskBoxes = map[string]string{"todo": "☐", "done": "☑"}

// PageBreak is a thematic break (`---`): a new page in PDF and DOCX, a new
// slide in PPTX, a rule in HTML and Markdown.
type PageBreak struct{}

func (*Heading) isBlock()   {}
func (*Paragraph) isBlock() {}
func (*List) isBlock()      {}
func (*Table) isBlock()     {}
func (*CodeBlock) isBlock() {}
func (*Quote) isBlock()     {}
func (*Figure) isBlock()    {}
func (*PageBreak) isBlock() {}

// Span is a run of text with one style. A span with Break set is a hard line
// break and has no text.
type Span struct {
	Text   string
	Bold   bool
	Italic bool
	Strike bool
	Code   bool
	Link   string
	Break  bool
}

// build makes the Document of goldmark's tree root of src.
func build(src []byte, root gast.Node, title string) *Document {
	c := converter{src: src}
	doc := &Document{Title: strings.TrimSpace(title), Blocks: c.blocks(root)}
	doc.ShowTitle = doc.Title != "" && !doc.opensWithTitle()
	if doc.Title == "" {
		for _, b := range doc.Blocks {
			if h, ok := b.(*Heading); ok && h.Level == 1 {
				doc.Title = plainText(h.Spans)
				break
			}
		}
	}
	return doc
}

// opensWithTitle reports whether the first block is a # heading that reads
// the title.
func (d *Document) opensWithTitle() bool {
	if len(d.Blocks) == 0 {
		return false
	}
	h, ok := d.Blocks[0].(*Heading)
	return ok && h.Level == 1 && plainText(h.Spans) == d.Title
}

// converter turns goldmark's AST into Document blocks.
type converter struct {
	src []byte
}

// blocks converts the block children of n.
func (c *converter) blocks(n gast.Node) []Block {
	var out []Block
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		out = append(out, c.block(ch)...)
	}
	return out
}

func (c *converter) block(n gast.Node) []Block {
	switch n := n.(type) {
	case *gast.Heading:
		spans, figs := c.inlines(n)
		return append([]Block{&Heading{Level: n.Level, Spans: spans}}, figs...)
	case *gast.Paragraph, *gast.TextBlock:
		spans, figs := c.inlines(n)
		var out []Block
		if hasText(spans) {
			out = append(out, &Paragraph{Spans: spans})
		}
		return append(out, figs...)
	case *gast.List:
		l := &List{Ordered: n.IsOrdered(), Start: n.Start}
		for it := n.FirstChild(); it != nil; it = it.NextSibling() {
			item := ListItem{Blocks: c.blocks(it)}
			if box := taskBox(it); box != nil {
				item.Task = "todo"
				if box.IsChecked {
					item.Task = "done"
				}
			}
			l.Items = append(l.Items, item)
		}
		return []Block{l}
	case *east.Table:
		return c.table(n)
	case *gast.FencedCodeBlock:
		return []Block{&CodeBlock{Lang: dropControls(string(n.Language(c.src))), Text: dropControls(c.lines(n))}}
	case *gast.CodeBlock:
		return []Block{&CodeBlock{Text: dropControls(c.lines(n))}}
	case *gast.Blockquote:
		return []Block{&Quote{Blocks: c.blocks(n)}}
	case *gast.ThematicBreak:
		return []Block{&PageBreak{}}
	case *gast.HTMLBlock:
		// Raw HTML is not interpreted (it would not survive in PDF, DOCX or
		// PPTX anyway); its text is kept, visibly, as code.
		var b strings.Builder
		b.WriteString(c.lines(n))
		if n.HasClosure() {
			b.Write(n.ClosureLine.Value(c.src))
		}
		s := strings.TrimRight(b.String(), "\n")
		if strings.HasPrefix(s, "<!--") {
			return nil // a comment
		}
		return []Block{&CodeBlock{Lang: "html", Text: s}}
	}
	return c.blocks(n)
}

// taskBox returns the task check box of a list item, if it has one.
func taskBox(item gast.Node) *east.TaskCheckBox {
	first := item.FirstChild()
	if first == nil {
		return nil
	}
	if box, ok := first.FirstChild().(*east.TaskCheckBox); ok {
		return box
	}
	return nil
}

func (c *converter) table(n *east.Table) []Block {
	t := &Table{}
	for _, a := range n.Alignments {
		t.Align = append(t.Align, map[east.Alignment]Align{east.AlignLeft: AlignLeft, east.AlignCenter: AlignCenter, east.AlignRight: AlignRight}[a])
	}
	var figs []Block
	row := func(r gast.Node) [][]Span {
		var cells [][]Span
		for cell := r.FirstChild(); cell != nil; cell = cell.NextSibling() {
			spans, f := c.inlines(cell)
			cells = append(cells, spans)
			figs = append(figs, f...)
		}
		return cells
	}
	for r := n.FirstChild(); r != nil; r = r.NextSibling() {
		switch r.(type) {
		case *east.TableHeader:
			t.Header = row(r)
		case *east.TableRow:
			t.Rows = append(t.Rows, row(r))
		}
	}
	// Every row has as many cells as there are columns.
	cols := len(t.Align)
	fit := func(cells [][]Span) [][]Span {
		for len(cells) < cols {
			cells = append(cells, nil)
		}
		return cells[:cols]
	}
	t.Header = fit(t.Header)
	for i := range t.Rows {
		t.Rows[i] = fit(t.Rows[i])
	}
	return append([]Block{t}, figs...)
}

// lines joins the raw lines of a code or HTML block.
func (c *converter) lines(n gast.Node) string {
	var b bytes.Buffer
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(c.src))
	}
	return strings.TrimRight(b.String(), "\n")
}

// inlines converts the inline children of n into spans, and lifts the images
// among them out as figures.
func (c *converter) inlines(n gast.Node) ([]Span, []Block) {
	var spans []Span
	var figs []Block
	c.walkInline(n, Span{}, &spans, &figs)
	return mergeSpans(spans), figs
}

// walkInline appends the spans and figures of the inline children of n; st
// is the style (a Span without text) they inherit from the nodes around them.
func (c *converter) walkInline(n gast.Node, st Span, spans *[]Span, figs *[]Block) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		switch ch := ch.(type) {
		case *gast.Text:
			s := string(ch.Value(c.src))
			if !ch.IsRaw() {
				s = unescape(s)
			}
			c.add(spans, st, s)
			switch {
			case ch.HardLineBreak():
				*spans = append(*spans, Span{Break: true})
			case ch.SoftLineBreak():
				c.add(spans, st, " ")
			}
		case *gast.String:
			s := string(ch.Value)
			if !ch.IsRaw() && !ch.IsCode() {
				s = unescape(s)
			}
			c.add(spans, st, s)
		case *gast.CodeSpan:
			code := st
			code.Code = true
			var b strings.Builder
			for t := ch.FirstChild(); t != nil; t = t.NextSibling() {
				switch t := t.(type) {
				case *gast.Text:
					b.Write(t.Value(c.src))
				case *gast.String:
					b.Write(t.Value)
				}
			}
			c.add(spans, code, b.String())
		case *gast.Emphasis:
			inner := st
			if ch.Level >= 2 {
				inner.Bold = true
			} else {
				inner.Italic = true
			}
			c.walkInline(ch, inner, spans, figs)
		case *east.Strikethrough:
			inner := st
			inner.Strike = true
			c.walkInline(ch, inner, spans, figs)
		case *gast.Link:
			inner := st
			inner.Link = linkTarget(string(ch.Destination))
			c.walkInline(ch, inner, spans, figs)
		case *gast.AutoLink:
			inner := st
			inner.Link = linkTarget(string(ch.URL(c.src)))
			c.add(spans, inner, string(ch.Label(c.src)))
		case *gast.Image:
			var alt []Span
			c.walkInline(ch, Span{}, &alt, figs)
			*figs = append(*figs, &Figure{Ref: imageRef(string(ch.Destination)), Alt: plainText(alt)})
		case *gast.RawHTML:
			var b strings.Builder
			for i := 0; i < ch.Segments.Len(); i++ {
				seg := ch.Segments.At(i)
				b.Write(seg.Value(c.src))
			}
			switch s := b.String(); {
			case isBreakTag(s):
				*spans = append(*spans, Span{Break: true})
			case !strings.HasPrefix(s, "<!--"):
				c.add(spans, st, s)
			}
		case *east.TaskCheckBox:
			// The list item carries the state.
		default:
			c.walkInline(ch, st, spans, figs)
		}
	}
}

// isBreakTag reports whether raw inline HTML is a <br>.
func isBreakTag(s string) bool {
	s = strings.ToLower(strings.ReplaceAll(s, " ", ""))
	return s == "<br>" || s == "<br/>"
}

func (c *converter) add(spans *[]Span, st Span, s string) {
	if st.Text = dropControls(s); st.Text != "" {
		*spans = append(*spans, st)
	}
}

// mergeSpans joins neighbouring spans of the same style and trims the space a
// trailing soft break left. A run of spans is joined once, at its end: adding
// each to the text so far would copy it again for every line of a paragraph,
// time quadratic in its length (100,000 lines took 9.6 s).
func mergeSpans(in []Span) []Span {
	var out []Span
	for i := 0; i < len(in); {
		s := in[i]
		j := i + 1
		for j < len(in) && !s.Break && !in[j].Break && sameStyle(s, in[j]) {
			j++
		}
		if j > i+1 {
			var text strings.Builder
			for _, t := range in[i:j] {
				text.WriteString(t.Text)
			}
			s.Text = text.String()
		}
		out = append(out, s)
		i = j
	}
	for len(out) > 0 {
		last := &out[len(out)-1]
		if !last.Break {
			if last.Text = strings.TrimRight(last.Text, " "); last.Text != "" {
				break
			}
		}
		out = out[:len(out)-1]
	}
	return out
}

func sameStyle(a, b Span) bool {
	return a.Bold == b.Bold && a.Italic == b.Italic && a.Strike == b.Strike && a.Code == b.Code && a.Link == b.Link
}

// dropControls removes the control characters no document format can hold
// (XML forbids them, PDF fonts have no glyphs for them); tabs and newlines
// stay.
func dropControls(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, s)
}

func isControl(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || r == 0xfffe || r == 0xffff
}

// unescape resolves backslash escapes and character references, as an HTML
// renderer would.
func unescape(s string) string {
	if !strings.ContainsAny(s, `\&`) {
		return s
	}
	b := util.UnescapePunctuations([]byte(s))
	b = util.ResolveNumericReferences(b)
	b = util.ResolveEntityNames(b)
	return string(b)
}

// linkTarget is a link's destination as every format holds it: character
// references and backslash escapes resolved, as a Markdown renderer does,
// then percent-encoded, so that Word and PowerPoint get a valid URI. A
// target that would run code or open a local file is dropped (""), judged as
// a browser reads it: tabs and newlines anywhere, and control characters and
// spaces around it, do not count, so "java<TAB>script:" is javascript:.
func linkTarget(dest string) string {
	s := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, unescape(dest))
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if s == "" || !safeLink(s) {
		return ""
	}
	return string(util.URLEscape([]byte(s), false))
}

// imageRef turns an image destination into the embed name it refers to:
// URL escapes are undone and a leading "./" is dropped.
func imageRef(dest string) string {
	if u, err := url.PathUnescape(dest); err == nil {
		dest = u
	}
	return strings.TrimPrefix(dest, "./")
}

// hasText reports whether spans show anything.
func hasText(spans []Span) bool {
	return slices.ContainsFunc(spans, func(s Span) bool { return strings.TrimSpace(s.Text) != "" })
}

// plainText is the text of spans without styles; breaks become spaces.
func plainText(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		if s.Break {
			b.WriteByte(' ')
			continue
		}
		b.WriteString(s.Text)
	}
	return strings.TrimSpace(b.String())
}

// figures returns every figure of blocks, nested ones included, in order.
func figures(blocks []Block) []*Figure {
	var out []*Figure
	eachBlock(blocks, func(b Block) {
		if f, ok := b.(*Figure); ok {
			out = append(out, f)
		}
	})
	return out
}

// eachBlock calls fn with every block of blocks, in order, each before the
// blocks nested in it (of lists and quotes).
func eachBlock(blocks []Block, fn func(Block)) {
	for _, b := range blocks {
		fn(b)
		switch b := b.(type) {
		case *List:
			for _, it := range b.Items {
				eachBlock(it.Blocks, fn)
			}
		case *Quote:
			eachBlock(b.Blocks, fn)
		}
	}
}
