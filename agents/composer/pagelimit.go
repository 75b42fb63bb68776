package composer

import (
	"errors"
	"fmt"
	"io"

	"github.com/agentura/agentura/filetype"
)

// errLimit marks a document refused for a limit of Limits; its message says
// which limit and what to do.
var errLimit = errors.New("document over a limit")

// tally is what a document holds, at any depth.
type tally struct {
	// pages is the pages a PDF or DOCX rendering has at least: one, plus
	// one per page break.
	pages int
	// blocks counts each heading, paragraph, list, table, code block,
	// quote, picture and page break.
	blocks int
	// cells counts the cells of all tables; widest is the table with the
	// most.
	cells  int
	widest *Table
}

// count tallies d.
func (d *Document) count() tally {
	t := tally{pages: 1}
	eachBlock(d.Blocks, func(b Block) {
		t.blocks++
		switch b := b.(type) {
		case *PageBreak:
			t.pages++
		case *Table:
			t.cells += b.cells()
			if t.widest == nil || b.cells() > t.widest.cells() {
				t.widest = b
			}
		}
	})
	return t
}

// cells is the table's number of cells, its header row included.
func (t *Table) cells() int { return len(t.Align) * (1 + len(t.Rows)) }

// checkPages refuses, before rendering, a document with more blocks than
// lim.Blocks, a table over lim.TableCells, tables over lim.Cells together,
// or (PDF, DOCX) more page breaks than lim.Pages allows. (ParseLimited
// counted blocks and cells already, to stop early; this is the exact count
// of what will be rendered. A PPTX deck is counted as it is built, by
// writePPTX, before anything is encoded.)
func checkPages(d *Document, format string, lim Limits) error {
	t := d.count()
	if t.blocks > lim.Blocks {
		return blocksError(t.blocks, lim.Blocks, "")
	}
	if w := t.widest; w != nil && w.cells() > lim.TableCells {
		return tableCellsError(w.cells(), 1+len(w.Rows), len(w.Align), lim.TableCells)
	}
	if t.cells > lim.Cells {
		return cellsError(t.cells, lim.Cells, "")
	}
	if (format == "pdf" || format == "docx") && t.pages > lim.Pages {
		return pagesError(t.pages, lim.Pages, "pages", "page breaks (---)")
	}
	return nil
}

func pagesError(n, limit int, what, cause string) error {
	return fmt.Errorf("%w: the document would have %d %s or more, more than the %d allowed in one document; use fewer %s, or split the document over several calls",
		errLimit, n, what, limit, cause)
}

// limitedWriter fails a write that would take the output past max bytes.
type limitedWriter struct {
	w       io.Writer
	n, max  int64
	refused bool
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n+int64(len(p)) > l.max {
		l.refused = true
		return 0, fmt.Errorf("%w: the rendered document exceeds %s, the most one output may have; split the document or use fewer or smaller pictures",
			errLimit, filetype.Size(l.max))
	}
	l.n += int64(len(p))
	return l.w.Write(p)
}
