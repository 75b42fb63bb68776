package ocr_test

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"strings"
	"testing"

	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
)

// TestBadInput checks that every kind of bad input is refused, before
// tesseract runs, with an error that says what is wrong and what to do.
func TestBadInput(t *testing.T) {
	svc, _ := newService(t, ocr.Config{MaxPages: 2, MaxPixels: 2_000_000})
	img := ocrtest.Render(t, sampleLines...)
	png, jpg, tif := ocrtest.PNG(t, img), ocrtest.JPEG(t, img), ocrtest.TIFF(t, img)

	flipped := bytes.Clone(png)
	idat := bytes.Index(flipped, []byte("IDAT"))
	flipped[idat+20] ^= 0xFF
	var gifData bytes.Buffer
	if err := gif.Encode(&gifData, image.NewPaletted(image.Rect(0, 0, 8, 8), color.Palette{color.White}), nil); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, file string
		data       []byte
		args       map[string]any // extra arguments
		want       []string       // all in the error
	}{
		{name: "Text", file: "notes.png", data: []byte("meeting notes: call the bank\n"),
			want: []string{"notes.png", "not an image or a PDF", "text/plain", "no OCR needed"}},
		{name: "GIF", file: "anim.gif", data: gifData.Bytes(),
			want: []string{"anim.gif", "GIF", "not an image or a PDF", "convert it to PNG"}},
		{name: "Zip", file: "scans.zip", data: zipOf(t, "a.png", png),
			want: []string{"scans.zip", "application/zip", "PNG, JPEG, TIFF and PDF"}},
		{name: "PNGChecksum", file: "scan.png", data: flipped,
			want: []string{"scan.png", "corrupt or truncated", "IDAT", "checksum"}},
		{name: "PNGTruncated", file: "scan.png", data: png[:len(png)-30],
			want: []string{"scan.png", "corrupt or truncated", "ends"}},
		{name: "PNGHeaderOnly", file: "scan.png", data: png[:20],
			want: []string{"scan.png", "corrupt or truncated", "PNG header"}},
		{name: "JPEGTruncated", file: "photo.jpg", data: jpg[:len(jpg)/2],
			want: []string{"photo.jpg", "corrupt or truncated", "end-of-image"}},
		{name: "TIFFTruncated", file: "fax.tif", data: tif[:len(tif)/2],
			want: []string{"fax.tif", "corrupt or truncated"}},
		{name: "TIFFStripPastEnd", file: "fax.tif", data: ocrtest.RawTIFF([]ocrtest.Size{{W: 100, H: 100}}, 10000, 100),
			want: []string{"fax.tif", "corrupt or truncated", "past its end"}},
		{name: "PDFCorrupt", file: "report.pdf", data: []byte("%PDF-1.7\n1 0 obj <<\n%%EOF garbage"),
			want: []string{"report.pdf", "PDF"}},
		{name: "PDFLocked", file: "locked.pdf", data: ocrtest.LockedPDF(t),
			want: []string{"locked.pdf", "password", "unlocked"}},

		{name: "PNGBombSide", file: "bomb.png", data: ocrtest.PNGHeader(100000, 10),
			want: []string{"bomb.png", "100000 × 10 pixels", "at most 32767 pixels a side"}},
		{name: "PNGBomb", file: "bomb.png", data: ocrtest.PNGHeader(20000, 20000),
			want: []string{"bomb.png", "20000 × 20000 pixels", "400.0 megapixels", "limit of 2.0 megapixels", "AGENT_OCR_MAX_PIXELS"}},
		{name: "TIFFBomb", file: "bomb.tif", data: ocrtest.RawTIFF([]ocrtest.Size{{W: 30000, H: 30000}}, 1, 1),
			want: []string{"bomb.tif", "page 1 is 30000 × 30000 pixels", "AGENT_OCR_MAX_PIXELS"}},
		{name: "TIFFBombSecondPage", file: "bomb.tif", data: ocrtest.RawTIFF([]ocrtest.Size{{W: 10, H: 10}, {W: 20000, H: 20000}}, 1, 1),
			want: []string{"bomb.tif", "page 2 is 20000 × 20000 pixels"}},
		{name: "PDFBigPage", file: "poster.pdf", data: ocrtest.BigPagePDF(t, 1000, 1000),
			want: []string{"poster.pdf", "page 1 is 4167 × 4167 pixels (1000 × 1000 pt at 300 dpi)", "AGENT_OCR_MAX_PIXELS"}},

		{name: "PDFTooManyPages", file: "book.pdf", data: ocrtest.PDF(t, []string{"one"}, []string{"two"}, []string{"three"}),
			want: []string{"book.pdf", "3 pages, more than the limit of 2", "AGENT_OCR_MAX_PAGES"}},
		{name: "TIFFTooManyPages", file: "book.tif", data: ocrtest.RawTIFF([]ocrtest.Size{{W: 1, H: 1}, {W: 1, H: 1}, {W: 1, H: 1}}, 1, 1),
			want: []string{"book.tif", "more than 2 pages", "AGENT_OCR_MAX_PAGES"}},

		{name: "LanguageMissing", file: "scan.png", data: png, args: map[string]any{"languages": []string{"eng", "tlh", "chi_yue"}},
			want: []string{`languages "tlh", "chi_yue" are not installed`, "installed: ", "eng", "apt-get install tesseract-ocr-tlh tesseract-ocr-chi-yue"}},
		{name: "LanguageOSD", file: "scan.png", data: png, args: map[string]any{"languages": []string{"osd"}},
			want: []string{`"osd"`, "not a language", `"eng"`}},
		{name: "UnknownOutput", file: "scan.png", data: png, args: map[string]any{"outputs": []string{"docx"}},
			want: []string{"outputs", "docx"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"source": attachment(tc.file, tc.data)}
			for k, v := range tc.args {
				args[k] = v
			}
			res, err := invoke(t, svc, "ocr_document", args)
			if err == nil {
				t.Fatalf("ocr_document succeeded: %q; want an error", res.Text)
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not say %q", err, w)
				}
			}
		})
	}
}
