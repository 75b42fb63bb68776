package ocr

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// pdfPages reads the pages of a PDF side by side: up to Config.Concurrency
// workers take the pages in order, each rasterising a page with pdftoppm and
// reading it with its own tesseract, every command within the engine's slots
// (so one long document uses every core, and many calls still share them
// fairly). The page texts are joined in page order into doc.Pages, and each
// output from the pages' own files into one (outBase + extension under dir):
// the searchable PDFs merged with pdfcpu, the hOCR pages in one page, the TSV
// rows under one header. For AutoLanguage, page 1 is rasterised first and
// its script detected; every page is then read in those languages.
func (a *Agent) pdfPages(ctx context.Context, input string, pages int, req request, dir string, doc *document) error {
	pagesDir := filepath.Join(dir, "pages")
	if err := os.Mkdir(pagesDir, 0o700); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// Progress counts two steps a page, rasterised and recognised, in the
	// order they happen across the workers.
	var steps atomic.Int64
	step := func(format string, args ...any) {
		req.progress.report(int(steps.Add(1)), 2*pages, format, args...)
	}
	images := make([]string, pages+1) // by page number
	langs := req.Languages
	if isAuto(langs) {
		first, err := a.rasterisePage(ctx, input, pagesDir, 1)
		if err != nil {
			return err
		}
		step("page 1 of %d rasterised", pages)
		images[1] = first
		if langs, err = a.detectLanguages(ctx, first); err != nil {
			return err
		}
	}
	doc.Languages = langs

	texts := make([][]string, pages+1)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(a.cfg.Concurrency, pages) {
		wg.Go(func() {
			for n := range next {
				var err error
				texts[n], err = a.pdfPage(ctx, input, images[n], n, pages, langs, req.Outputs, dir, step)
				if err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for n := 1; n <= pages; n++ {
		select {
		case next <- n:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	for n := 1; n <= pages; n++ {
		doc.Pages = append(doc.Pages, strings.Join(texts[n], "\n"))
	}
	return joinOutputs(dir, pages, req.Outputs)
}

// pdfPage reads page n of pages of the PDF at input: rasterised to a PNG
// under dir/pages (unless img is one already), read by tesseract, the
// image removed. Its span covers both, slot waits included (an event
// marks each command's start).
func (a *Agent) pdfPage(ctx context.Context, input, img string, n, pages int, langs, outputs []string, dir string, step func(string, ...any)) (text []string, err error) {
	ctx, span := startPage(ctx, n, 1, pages, langs)
	defer func() { endPage(span, err, input, dir) }()
	if img == "" {
		if img, err = a.rasterisePage(ctx, input, filepath.Join(dir, "pages"), n); err != nil {
			return nil, err
		}
		step("page %d of %d rasterised", n, pages)
	}
	text, err = a.tesseract(ctx, img, pageBase(dir, n), langs, outputs, "--dpi", strconv.Itoa(DPI))
	os.Remove(img) // 25 MB a page at 300 dpi: gone as soon as read
	if err != nil {
		return nil, err
	}
	step("page %d of %d recognised", n, pages)
	return text, nil
}

// pageBase is where the outputs of page n go, without their extension.
func pageBase(dir string, n int) string {
	return filepath.Join(dir, "pages", "ocr-"+strconv.Itoa(n))
}

// joinOutputs joins the per-page files of each output into dir/ocr.<ext>.
func joinOutputs(dir string, pages int, outputs []string) error {
	for _, o := range outputs {
		f := formats[o]
		files := make([]string, pages)
		for n := 1; n <= pages; n++ {
			files[n-1] = pageBase(dir, n) + f.ext
		}
		out := filepath.Join(dir, "ocr"+f.ext)
		var err error
		switch o {
		case OutputSearchablePDF:
			err = mergePDFs(files, out)
		case OutputHOCR:
			err = joinPages(files, out, joinHOCR)
		case OutputTSV:
			err = joinPages(files, out, joinTSV)
		}
		if err != nil {
			return fmt.Errorf("join the pages' %s files: %w", o, err)
		}
	}
	return nil
}

// mergePDFs merges the one-page searchable PDFs tesseract wrote, in order,
// into out with pdfcpu.
func mergePDFs(files []string, out string) error {
	if len(files) == 1 {
		return os.Rename(files[0], out)
	}
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	return api.MergeCreateFile(files, out, false, conf)
}

// joinPages reads files and writes what join makes of their contents
// (page n's at index n-1) to out.
func joinPages(files []string, out string, join func([][]byte) []byte) error {
	parts := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		parts[i] = b
	}
	return os.WriteFile(out, join(parts), 0o600)
}

// hocrIDs are the element ids and page numbers of a one-page hOCR file that
// name its page: tesseract numbers the page's elements page_1, block_1_2,
// word_1_7..., and gives the page "ppageno 0".
var (
	hocrID     = regexp.MustCompile(`(id=['"][a-z_]+?_)1([_'"])`)
	hocrPageNo = regexp.MustCompile(`ppageno 0\b`)
)

// joinHOCR makes one hOCR document of one-page ones: the first page's head,
// every page's ocr_page element renumbered as the page it is, the first
// page's end.
func joinHOCR(pages [][]byte) []byte {
	if len(pages) == 1 {
		return pages[0]
	}
	bodyOf := func(p []byte) (head, body, tail []byte) {
		start := bytes.Index(p, []byte("<body>"))
		end := bytes.LastIndex(p, []byte("</body>"))
		if start < 0 || end < start {
			return nil, p, nil
		}
		start += len("<body>")
		return p[:start], p[start:end], p[end:]
	}
	head, _, tail := bodyOf(pages[0])
	out := append([]byte{}, head...)
	for i, p := range pages {
		_, body, _ := bodyOf(p)
		n := strconv.Itoa(i + 1)
		body = hocrID.ReplaceAll(body, []byte("${1}"+n+"${2}"))
		body = hocrPageNo.ReplaceAll(body, []byte("ppageno "+strconv.Itoa(i)))
		out = append(out, body...)
	}
	return append(out, tail...)
}

// joinTSV makes one TSV of one-page ones: the header line once, then every
// page's rows with its page number in the page_num column.
func joinTSV(pages [][]byte) []byte {
	var out []byte
	for i, p := range pages {
		lines := bytes.SplitAfter(p, []byte("\n"))
		for j, line := range lines {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if j == 0 && bytes.HasPrefix(line, []byte("level\t")) {
				if i == 0 {
					out = append(out, line...)
				}
				continue
			}
			cols := bytes.SplitN(line, []byte("\t"), 3)
			if len(cols) == 3 {
				line = bytes.Join([][]byte{cols[0], []byte(strconv.Itoa(i + 1)), cols[2]}, []byte("\t"))
			}
			out = append(out, line...)
		}
	}
	return out
}
