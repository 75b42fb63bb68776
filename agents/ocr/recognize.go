package ocr

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentura/agentura/agentcore"
)

// The files ocr_document can hand out beside the text.
const (
	OutputSearchablePDF = "searchable_pdf" // the pages with an invisible text layer
	OutputHOCR          = "hocr"           // words with their boxes, as XHTML
	OutputTSV           = "tsv"            // words with boxes and confidences, tab-separated
)

// outputFormat is how tesseract makes one kind of output file.
type outputFormat struct {
	config string // tesseract's config file that turns it on
	ext    string // of tesseract's file, and of the file handed out
	mime   string
}

func formatOf(output string) (outputFormat, bool) {
	switch output {
	case OutputSearchablePDF:
		return outputFormat{config: "pdf", ext: ".pdf", mime: "application/pdf"}, true
	case OutputHOCR:
		return outputFormat{config: "hocr", ext: ".hocr", mime: "application/xhtml+xml"}, true
	case OutputTSV:
		return outputFormat{config: "tsv", ext: ".tsv", mime: "text/tab-separated-values; charset=utf-8"}, true
	}
	return outputFormat{}, false
}

// request is what to read a document for.
type request struct {
	Languages []string // checked, installed
	Outputs   []string // checked, deduplicated
	progress  progress // reports a single document's pages; nil in a batch
}

// document is the OCR of one input.
type document struct {
	Source string   // the input's (sanitised) name
	Pages  []string // the text of each page, in order
	Files  []agentcore.Output
}

// recognize reads src: PDF pages are rasterised first, then one tesseract
// run reads every page and writes the text and each requested file, so a
// multi-page input gives one multi-page searchable PDF. dir is a fresh
// folder for the work; the outputs stay in it.
func (a *Agent) recognize(ctx context.Context, src *source, req request, dir string) (*document, error) {
	// Absolute paths: never read as options, whatever the data folder.
	input, err := filepath.Abs(src.Path)
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	args := []string{}
	if src.Kind == kindPDF {
		pagesDir := filepath.Join(dir, "pages")
		if err := os.Mkdir(pagesDir, 0o700); err != nil {
			return nil, err
		}
		pages, err := a.rasterise(ctx, input, pagesDir, src.Pages)
		if err != nil {
			return nil, err
		}
		req.progress.report(len(pages), 2*len(pages), "%s rasterised", plural(len(pages), "page"))
		// tesseract reads a text file of image paths as one document.
		input = filepath.Join(dir, "pages.txt")
		if err := os.WriteFile(input, []byte(strings.Join(pages, "\n")+"\n"), 0o600); err != nil {
			return nil, err
		}
		args = append(args, "--dpi", strconv.Itoa(DPI))
	}
	outBase := filepath.Join(dir, "ocr")
	args = append([]string{input, outBase, "-l", strings.Join(req.Languages, "+")}, args...)
	args = append(args, "txt")
	for _, o := range req.Outputs {
		f, _ := formatOf(o)
		args = append(args, f.config)
	}
	offset, total := pageSteps(src)
	var started func(int)
	if req.progress != nil {
		started = func(n int) {
			req.progress.report(offset+n, total, "recognising page %d of %d", n+1, max(src.Pages, 1))
		}
	}
	if _, err := a.engine.heavyPages(ctx, started, a.cfg.Tesseract, args...); err != nil {
		return nil, err
	}
	req.progress.report(total, total, "%s recognised", plural(max(src.Pages, 1), "page"))

	txt, err := os.ReadFile(outBase + ".txt")
	if err != nil {
		return nil, fmt.Errorf("tesseract wrote no text: %w", err)
	}
	doc := &document{Source: src.Name, Pages: splitPages(string(txt))}
	a.engine.metrics.pages.Add(float64(len(doc.Pages)))
	stem := strings.TrimSuffix(src.Name, filepath.Ext(src.Name))
	for _, o := range req.Outputs {
		f, _ := formatOf(o)
		name := stem + f.ext
		if o == OutputSearchablePDF {
			name = stem + ".ocr.pdf" // never the input's own name
		}
		doc.Files = append(doc.Files, agentcore.Output{Name: name, MIMEType: f.mime, Path: outBase + f.ext})
	}
	return doc, nil
}

// splitPages splits tesseract's text output into pages: each page's text is
// followed by a form feed.
func splitPages(txt string) []string {
	parts := strings.Split(txt, "\f")
	if len(parts) > 1 && strings.TrimSpace(parts[len(parts)-1]) == "" {
		parts = parts[:len(parts)-1]
	}
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}
