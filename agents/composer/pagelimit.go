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

// count returns the pages a PDF or DOCX rendering of d has at least (one,
// plus one per page break at any depth) and the number of blocks at any
// depth (each heading, paragraph, list item, table, code block, picture).
func (d *Document) count() (pages, blocks int) {
	pages = 1
	var walk func([]Block)
	walk = func(bs []Block) {
		for _, b := range bs {
			blocks++
			switch b := b.(type) {
			case *PageBreak:
				pages++
			case *Quote:
				walk(b.Blocks)
			case *List:
				for _, it := range b.Items {
					walk(it.Blocks)
				}
			}
		}
	}
	walk(d.Blocks)
	return pages, blocks
}

// checkPages refuses, before rendering, a document with more blocks than
// lim.Blocks, or (PDF, DOCX) more page breaks than lim.Pages allows. (A
// PPTX deck is counted as it is built, by writePPTX, before anything is
// encoded.)
func checkPages(d *Document, format string, lim Limits) error {
	pages, blocks := d.count()
	if blocks > lim.Blocks {
		return fmt.Errorf("%w: the document has %d blocks (headings, paragraphs, list items, tables, pictures), more than the %d allowed in one document; split it over several calls",
			errLimit, blocks, lim.Blocks)
	}
	if (format == "pdf" || format == "docx") && pages > lim.Pages {
		return pagesError(pages, lim.Pages, "pages", "page breaks (---)")
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
