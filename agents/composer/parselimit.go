package composer

import (
	"bytes"
	"fmt"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// parseBudget counts, while goldmark parses, the blocks and table cells a
// document makes, and stops the parse at the first limit passed: goldmark
// builds its whole tree before anything can be counted on it, and that
// tree is what costs (2 MiB of "# a\n\nb\n\n", 400,000 blocks, peaked at
// 277 MiB before it was refused; a 1 MB table of 480,000 cells takes
// about 240 MiB as a tree). Once a limit is passed no block opens any more,
// so the parse ends at the next line that would start one, and a table
// over its budget is left a paragraph; the document is refused with err.
type parseBudget struct {
	lim     Limits
	blocks  int // blocks opened, list items aside (their content counts)
	inlines int // lines of text, and inline elements parsed in them
	cells   int // cells of the tables made so far
	err     error
}

// inline counts n lines or inline elements, failing b past lim.Inlines.
func (b *parseBudget) inline(n int) {
	if b.inlines += n; b.inlines > b.lim.Inlines && b.err == nil {
		b.err = inlinesError(b.inlines, b.lim.Inlines)
	}
}

// ParseLimited is Parse within lim's Blocks, Inlines, TableCells and Cells: it
// stops, and fails with an error naming the limit, as soon as the Markdown
// passes one of them, before the rest is parsed.
func ParseLimited(markdown []byte, title string, lim Limits) (*Document, error) {
	lim = lim.withDefaults()
	b := &parseBudget{lim: lim}
	root := b.parser().Parser().Parse(stoppingReader{text.NewReader(markdown), b})
	if b.err != nil {
		return nil, b.err
	}
	return build(markdown, root, title), nil
}

// parser is goldmark with the GitHub extensions (extension.GFM) whose block
// parsers, inline parsers and tables count against b.
func (b *parseBudget) parser() goldmark.Markdown {
	var bps, ips []util.PrioritizedValue
	for _, v := range parser.DefaultBlockParsers() {
		bps = append(bps, util.Prioritized(&countedBlocks{BlockParser: v.Value.(parser.BlockParser), b: b}, v.Priority))
	}
	inline := append(parser.DefaultInlineParsers(),
		// extension.GFM's, at its priorities.
		util.Prioritized(extension.NewLinkifyParser(), 999),
		util.Prioritized(extension.NewStrikethroughParser(), 500),
		util.Prioritized(extension.NewTaskCheckBoxParser(), 0))
	for _, v := range inline {
		ip := v.Value.(parser.InlineParser)
		var counted parser.InlineParser = &countedInlines{InlineParser: ip, b: b}
		if cb, ok := ip.(parser.CloseBlocker); ok {
			counted = &countedInlinesCloser{countedInlines{InlineParser: ip, b: b}, cb}
		}
		ips = append(ips, util.Prioritized(counted, v.Priority))
	}
	return goldmark.New(
		goldmark.WithParser(parser.NewParser(
			parser.WithBlockParsers(bps...),
			parser.WithInlineParsers(ips...),
			parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
			// Before the table transformer (200), which it keeps from
			// making a table over the budget.
			parser.WithParagraphTransformers(util.Prioritized(tableBudget{b}, 199)),
		)),
		goldmark.WithExtensions(extension.Table),
	)
}

// stoppingReader ends the text for goldmark's block parser once b has
// failed: what was not read is neither kept in a paragraph nor parsed.
type stoppingReader struct {
	text.Reader
	b *parseBudget
}

func (r stoppingReader) PeekLine() ([]byte, text.Segment) {
	if r.b.err != nil {
		_, pos := r.Reader.Position()
		return nil, pos
	}
	return r.Reader.PeekLine()
}

// countedBlocks is a block parser whose blocks count against b; once b has
// failed it opens none. A list item is not one of Limits.Blocks (what it
// holds is).
type countedBlocks struct {
	parser.BlockParser
	b *parseBudget
}

func (c *countedBlocks) Open(parent gast.Node, reader text.Reader, pc parser.Context) (gast.Node, parser.State) {
	if c.b.err != nil {
		return nil, parser.NoChildren
	}
	n, st := c.BlockParser.Open(parent, reader, pc)
	if n != nil && n.Kind() != gast.KindListItem {
		c.b.inline(1) // its first line
		if c.b.blocks++; c.b.blocks > c.b.lim.Blocks && c.b.err == nil {
			c.b.err = blocksError(c.b.blocks, c.b.lim.Blocks, " or more")
		}
	}
	return n, st
}

// Continue counts each further line of a paragraph, whose text is parsed.
func (c *countedBlocks) Continue(n gast.Node, reader text.Reader, pc parser.Context) parser.State {
	st := c.BlockParser.Continue(n, reader, pc)
	if st&parser.Continue != 0 && n.Kind() == gast.KindParagraph {
		c.b.inline(1)
	}
	return st
}

// countedInlines is an inline parser whose elements count against b; once
// b has failed it parses none (what is left stays text).
type countedInlines struct {
	parser.InlineParser
	b *parseBudget
}

func (c *countedInlines) Parse(parent gast.Node, block text.Reader, pc parser.Context) gast.Node {
	if c.b.err != nil {
		return nil
	}
	n := c.InlineParser.Parse(parent, block, pc)
	if n != nil {
		c.b.inline(1)
	}
	return n
}

// countedInlinesCloser is countedInlines of a parser that is told when a
// block ends.
type countedInlinesCloser struct {
	countedInlines
	parser.CloseBlocker
}

// tableBudget is a paragraph transformer that counts the cells of the table
// a paragraph is about to become (its columns times its rows, header
// included) and, when they pass TableCells or the document's Cells, fails
// the budget and leaves too little of the paragraph for a table.
type tableBudget struct{ b *parseBudget }

func (t tableBudget) Transform(node *gast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if t.b.err != nil || lines.Len() < 2 {
		return
	}
	src := reader.Source()
	for i := 1; i < lines.Len(); i++ {
		seg := lines.At(i)
		cols := delimiterColumns(seg.Value(src))
		if cols == 0 {
			continue
		}
		rows := lines.Len() - i // the header and the rows below the delimiter
		cells := cols * rows
		switch {
		case cells > t.b.lim.TableCells:
			t.b.err = tableCellsError(cells, rows, cols, t.b.lim.TableCells)
		case t.b.cells+cells > t.b.lim.Cells:
			t.b.err = cellsError(t.b.cells+cells, t.b.lim.Cells, " or more")
		default:
			t.b.cells += cells
			return
		}
		lines.SetSliced(0, 1) // no table is made of one line
		return
	}
}

// delimiterColumns is the number of columns of a GFM table's delimiter row
// (| --- | :-: |), or 0 when line is not one.
func delimiterColumns(line []byte) int {
	line = bytes.TrimSpace(line)
	if !bytes.Contains(line, []byte{'-'}) {
		return 0
	}
	cols := bytes.Split(line, []byte{'|'})
	if len(cols) > 0 && len(bytes.TrimSpace(cols[0])) == 0 {
		cols = cols[1:]
	}
	if len(cols) > 0 && len(bytes.TrimSpace(cols[len(cols)-1])) == 0 {
		cols = cols[:len(cols)-1]
	}
	for _, c := range cols {
		c = bytes.TrimSpace(c)
		c = bytes.TrimPrefix(c, []byte{':'})
		c = bytes.TrimSuffix(c, []byte{':'})
		if len(c) == 0 || len(bytes.Trim(c, "-")) != 0 {
			return 0
		}
	}
	return len(cols)
}

func blocksError(n, limit int, more string) error {
	return fmt.Errorf("%w: the document has %d%s blocks (headings, paragraphs, list items, tables, pictures), more than the %d allowed in one document; split it over several calls",
		errLimit, n, more, limit)
}

func inlinesError(n, limit int) error {
	return fmt.Errorf("%w: the document has %d or more lines and inline elements (emphasis, links, code spans, line breaks), more than the %d allowed in one document; split it over several calls",
		errLimit, n, limit)
}

func tableCellsError(cells, rows, cols, limit int) error {
	return fmt.Errorf("%w: a table has %d cells (%d rows × %d columns, the header row included), more than the %d allowed in one table; split the table into smaller ones, or send the data as a file",
		errLimit, cells, rows, cols, limit)
}

func cellsError(n, limit int, more string) error {
	return fmt.Errorf("%w: the document's tables have %d%s cells together, more than the %d allowed in one document; split the document over several calls, or send the data as a file",
		errLimit, n, more, limit)
}
