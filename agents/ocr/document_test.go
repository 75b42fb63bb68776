package ocr_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// The text the tests render, and words tesseract must read back from it.
var (
	sampleLines = []string{"The quick brown fox", "jumps over the lazy dog"}
	sampleWords = []string{"quick", "brown", "fox", "jumps", "lazy", "dog"}
)

// wantWords fails the test unless text holds every word, in order.
func wantWords(t *testing.T, what, text string, words ...string) {
	t.Helper()
	rest := strings.ToLower(text)
	for _, w := range words {
		i := strings.Index(rest, strings.ToLower(w))
		if i < 0 {
			t.Errorf("%s: %q not found (in order) in %q", what, w, text)
			return
		}
		rest = rest[i+len(w):]
	}
}

// pageTexts returns the structured pages of a result, checking their numbers.
func pageTexts(t *testing.T, res *agentcore.Result) []string {
	t.Helper()
	pages, ok := res.Structured()["pages"].([]ocr.Page)
	if !ok {
		t.Fatalf("structured pages = %T %v, want []ocr.Page", res.Structured()["pages"], res.Structured()["pages"])
	}
	var texts []string
	for i, p := range pages {
		if p.Page != i+1 {
			t.Errorf("pages[%d].page = %d, want %d", i, p.Page, i+1)
		}
		texts = append(texts, p.Text)
	}
	return texts
}

// TestImageFormats reads the same text rendered into each image format.
func TestImageFormats(t *testing.T) {
	svc, _ := newService(t, ocr.Config{})
	img := ocrtest.Render(t, sampleLines...)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"scan.png", ocrtest.PNG(t, img)},
		{"photo.jpg", ocrtest.JPEG(t, img)},
		{"fax.tiff", ocrtest.TIFF(t, img)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := invoke(t, svc, "ocr_document", map[string]any{"source": attachment(tc.name, tc.data)})
			if err != nil {
				t.Fatalf("ocr_document: %v", err)
			}
			wantWords(t, "text content", res.Text, sampleWords...)
			if !strings.HasPrefix(res.Text, "Text of "+tc.name+" (1 page, eng):") {
				t.Errorf("text content starts %q, want a heading naming %s, 1 page and eng", res.Text, tc.name)
			}
			pages := pageTexts(t, res)
			if len(pages) != 1 {
				t.Fatalf("%d pages, want 1", len(pages))
			}
			wantWords(t, "page 1", pages[0], sampleWords...)
			data := res.Structured()
			if data["page_count"] != 1 || data["source"] != tc.name || data["text"] != pages[0] {
				t.Errorf("structured = page_count %v, source %v, text %q; want 1, %s, the page's text", data["page_count"], data["source"], data["text"], tc.name)
			}
			if len(res.Files) != 0 {
				t.Errorf("%d files produced, none asked for", len(res.Files))
			}
		})
	}
}

// TestPDFPagesAndOutputs reads a scanned three-page PDF and checks the page
// order everywhere: the text, the searchable PDF's text layer, hOCR and TSV.
func TestPDFPagesAndOutputs(t *testing.T) {
	svc, _ := newService(t, ocr.Config{})
	words := []string{"alpha", "bravo", "charlie"}
	var pages [][]string
	for _, w := range words {
		pages = append(pages, []string{"Page about " + w})
	}
	pdf := ocrtest.PDF(t, pages...)
	if txt := strings.TrimSpace(strings.ReplaceAll(ocrtest.PDFText(t, pdf), "\f", "")); txt != "" {
		t.Fatalf("the input PDF already has text %q; it must be scanned pages only", txt)
	}

	res, err := invoke(t, svc, "ocr_document", map[string]any{
		"source":  attachment("report.pdf", pdf),
		"outputs": []string{"searchable_pdf", "hocr", "tsv"},
	})
	if err != nil {
		t.Fatalf("ocr_document: %v", err)
	}
	got := pageTexts(t, res)
	if len(got) != len(words) {
		t.Fatalf("%d pages, want %d: %q", len(got), len(words), got)
	}
	for i, w := range words {
		wantWords(t, "page "+string(rune('1'+i)), got[i], "page", w)
	}
	if text := res.Structured()["text"]; text != strings.Join(got, "\f") {
		t.Errorf("structured text = %q, want the pages joined by form feeds", text)
	}
	wantWords(t, "text content", res.Text, "page 1 of 3", "alpha", "page 2 of 3", "bravo", "page 3 of 3", "charlie")

	files := map[string][]byte{}
	for _, f := range res.Files {
		files[f.Filename] = mcptest.Download(t, f.DownloadURL)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	if !slices.Equal(names, []string{"report.hocr", "report.ocr.pdf", "report.tsv"}) {
		t.Fatalf("files %v, want report.ocr.pdf, report.hocr, report.tsv", names)
	}

	// One searchable PDF of three pages, each with its own words.
	layer := strings.Split(strings.TrimRight(ocrtest.PDFText(t, files["report.ocr.pdf"]), "\f\n"), "\f")
	if len(layer) != 3 {
		t.Fatalf("the searchable PDF's text layer has %d pages, want 3: %q", len(layer), layer)
	}
	for i, w := range words {
		wantWords(t, "text layer of page "+string(rune('1'+i)), layer[i], w)
	}

	hocr := string(files["report.hocr"])
	if n := strings.Count(hocr, "class='ocr_page'"); n != 3 {
		t.Errorf("hOCR has %d ocr_page elements, want 3", n)
	}
	wantWords(t, "hOCR", hocr, words...)

	// TSV: level, page_num, ..., text; each word on its own page.
	pageOf := map[string]string{}
	for _, line := range strings.Split(string(files["report.tsv"]), "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) == 12 {
			pageOf[strings.ToLower(cols[11])] = cols[1]
		}
	}
	for i, w := range words {
		if pageOf[w] != string(rune('1'+i)) {
			t.Errorf("TSV puts %q on page %q, want %d", w, pageOf[w], i+1)
		}
	}
}

// TestLanguages reads with the default and an explicit language.
func TestLanguages(t *testing.T) {
	svc, _ := newService(t, ocr.Config{})
	png := ocrtest.PNG(t, ocrtest.Render(t, sampleLines...))
	res, err := invoke(t, svc, "ocr_document", map[string]any{"source": attachment("scan.png", png), "languages": []string{"eng", "eng"}})
	if err != nil {
		t.Fatalf("ocr_document: %v", err)
	}
	if langs := res.Structured()["languages"]; !slices.Equal(langs.([]string), []string{"eng"}) {
		t.Errorf("languages = %v, want [eng] (deduplicated)", langs)
	}
	wantWords(t, "text", res.Text, sampleWords...)
	if bytes.Contains([]byte(res.Text), []byte("osd")) {
		t.Errorf("text mentions osd: %q", res.Text)
	}
}

// TestMultiPageTIFF reads every page of a TIFF, in order, into one
// searchable PDF.
func TestMultiPageTIFF(t *testing.T) {
	svc, _ := newService(t, ocr.Config{})
	tif := ocrtest.GrayTIFF(ocrtest.Render(t, "Fax page golf"), ocrtest.Render(t, "Fax page hotel"))
	res, err := invoke(t, svc, "ocr_document", map[string]any{"source": attachment("fax.tif", tif), "outputs": []string{"searchable_pdf"}})
	if err != nil {
		t.Fatalf("ocr_document: %v", err)
	}
	pages := pageTexts(t, res)
	if len(pages) != 2 {
		t.Fatalf("%d pages, want 2: %q", len(pages), pages)
	}
	wantWords(t, "page 1", pages[0], "golf")
	wantWords(t, "page 2", pages[1], "hotel")
	layer := strings.Split(strings.TrimRight(ocrtest.PDFText(t, mcptest.Download(t, res.Files[0].DownloadURL)), "\f\n"), "\f")
	if len(layer) != 2 {
		t.Fatalf("the searchable PDF's text layer has %d pages, want 2: %q", len(layer), layer)
	}
	wantWords(t, "text layer of page 2", layer[1], "hotel")
}
