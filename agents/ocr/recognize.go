package ocr

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// formats are the output kinds ocr_document knows, by name.
var formats = map[string]outputFormat{
	OutputSearchablePDF: {config: "pdf", ext: ".pdf", mime: "application/pdf"},
	OutputHOCR:          {config: "hocr", ext: ".hocr", mime: "application/xhtml+xml"},
	OutputTSV:           {config: "tsv", ext: ".tsv", mime: "text/tab-separated-values; charset=utf-8"},
}

// request is what to read a document for.
type request struct {
	Languages []string // checked, installed; or just AutoLanguage
	Outputs   []string // checked, deduplicated
	progress  progress // reports a single document's pages; nil in a batch
}

// document is the OCR of one input.
type document struct {
	Source    string   // the input's (sanitised) name
	Languages []string // the languages read with (detected ones for AutoLanguage)
	Pages     []string // the text of each page, in order
	Files     []agentcore.Output
}

// recognize reads src into dir, a fresh folder for the work where the
// outputs stay. A PDF is read page by page, its pages spread over the engine
// (pdfPages); an image, or a TIFF of several pages, in one tesseract run.
func (a *Agent) recognize(ctx context.Context, src *source, req request, dir string) (*document, error) {
	// Absolute paths: never read as options, whatever the data folder.
	input, err := filepath.Abs(src.Path)
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	doc := &document{Source: src.Name}
	outBase := filepath.Join(dir, "ocr")
	if src.Kind == kindPDF {
		if err := a.pdfPages(ctx, input, src.Pages, req, dir, doc); err != nil {
			return nil, err
		}
	} else {
		if doc.Languages, err = a.languagesFor(ctx, req, input); err != nil {
			return nil, err
		}
		pages := max(src.Pages, 1) // one tesseract run reads them all
		pctx, span := startPage(ctx, 1, pages, pages, doc.Languages)
		doc.Pages, err = a.tesseract(pctx, input, outBase, doc.Languages, req.Outputs)
		endPage(span, err, input, dir)
		if err != nil {
			return nil, err
		}
		req.progress.report(pages, pages, "%s recognised", plural(pages, "page"))
	}
	a.engine.metrics.pages.Add(float64(len(doc.Pages)))
	stem := strings.TrimSuffix(src.Name, filepath.Ext(src.Name))
	for _, o := range req.Outputs {
		f := formats[o]
		name := stem + f.ext
		if o == OutputSearchablePDF {
			name = stem + ".ocr.pdf" // never the input's own name
		}
		doc.Files = append(doc.Files, agentcore.Output{Name: name, MIMEType: f.mime, Path: outBase + f.ext})
	}
	return doc, nil
}

// tesseract runs one tesseract over input (an image, or a PDF page
// rasterised at DPI when pageImage is set), writing outBase.txt and a file
// per output, and returns the text of each page.
func (a *Agent) tesseract(ctx context.Context, input, outBase string, langs, outputs []string, extra ...string) ([]string, error) {
	args := append([]string{input, outBase, "-l", strings.Join(langs, "+")}, extra...)
	args = append(args, "txt")
	for _, o := range outputs {
		f := formats[o]
		args = append(args, f.config)
	}
	if _, err := a.engine.heavy(ctx, a.cfg.Tesseract, args...); err != nil {
		return nil, err
	}
	txt, err := os.ReadFile(outBase + ".txt")
	if err != nil {
		return nil, fmt.Errorf("tesseract wrote no text: %w", err)
	}
	return splitPages(string(txt)), nil
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
