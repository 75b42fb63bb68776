package ocr

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// progress reports how far the recognition of one document has got; nil
// reports nothing (agentcore.Call.Progress's signature).
type progress func(done, total float64, message string)

func (p progress) report(done, total int, format string, args ...any) {
	if p != nil {
		p(float64(done), float64(total), fmt.Sprintf(format, args...))
	}
}

// pageSteps is the progress scale of a document: for a PDF each page is
// rasterised, then recognised (two steps a page); other inputs are only
// recognised.
func pageSteps(src *source) (offset, total int) {
	pages := max(src.Pages, 1)
	if src.Kind == kindPDF {
		return pages, 2 * pages
	}
	return 0, pages
}

// pageWatcher reads tesseract's stderr as it comes: for a list of pages it
// writes "Page <n> : <path>" (n from 0) as it starts each page, so page n
// starting means n pages are done. Every byte goes on to next as well.
type pageWatcher struct {
	next    *tailBuffer
	line    []byte
	started func(n int)
}

func (w *pageWatcher) Write(p []byte) (int, error) {
	n := len(p)
	w.next.Write(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(w.line) < 4096 {
				w.line = append(w.line, p...)
			}
			break
		}
		w.line = append(w.line, p[:i]...)
		if rest, ok := strings.CutPrefix(string(w.line), "Page "); ok {
			num, _, _ := strings.Cut(rest, " ")
			if n, err := strconv.Atoi(num); err == nil {
				w.started(n)
			}
		}
		w.line = w.line[:0]
		p = p[i+1:]
	}
	return n, nil
}
