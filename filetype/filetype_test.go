package filetype_test

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/filetype"
	"github.com/gabriel-vasile/mimetype"
)

const (
	mimeDocx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	mimeXlsx = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	mimePptx = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
)

func testImage() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 32, 16))
	for x := 0; x < 32; x++ {
		for y := 0; y < 16; y++ {
			img.Set(x, y, color.RGBA{uint8(x * 8), uint8(y * 16), 128, 255})
		}
	}
	return img
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, testImage()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func jpegBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, testImage(), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func pdfBytes() []byte {
	return []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n" +
		"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")
}

// entry is one member of a zip archive.
type entry struct {
	name    string
	content []byte
	store   bool // no compression
}

func zipBytes(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.store {
			h.Method = zip.Store
		}
		f, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(e.content); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const contentTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`

const rels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"/>`

// officeBytes builds an OOXML package with its members in the order Office
// writes them: [Content_Types].xml, _rels/.rels, the main part, docProps.
// mimetype requires the first member to be one of those and looks for the
// word/, ppt/ or xl/ folder among the first entries.
func officeBytes(t *testing.T, mainPart string) []byte {
	t.Helper()
	return zipBytes(t,
		entry{name: "[Content_Types].xml", content: []byte(contentTypes)},
		entry{name: "_rels/.rels", content: []byte(rels)},
		entry{name: mainPart, content: []byte(`<?xml version="1.0" encoding="UTF-8"?><root/>`)},
		entry{name: "docProps/core.xml", content: []byte(`<?xml version="1.0"?><cp:coreProperties/>`)},
		entry{name: "docProps/app.xml", content: []byte(`<?xml version="1.0"?><Properties/>`)},
	)
}

func docxBytes(t *testing.T) []byte { return officeBytes(t, "word/document.xml") }
func pptxBytes(t *testing.T) []byte { return officeBytes(t, "ppt/presentation.xml") }
func xlsxBytes(t *testing.T) []byte { return officeBytes(t, "xl/workbook.xml") }

func plainZipBytes(t *testing.T) []byte {
	return zipBytes(t,
		entry{name: "notes.txt", content: []byte("hello")},
		entry{name: "data/values.csv", content: []byte("a,b\n1,2\n")},
	)
}

const markdown = "# Quarterly report\n\nRevenue grew **12%**.\n\n- one\n- two\n"

const csvText = "name,qty,price\nwidget,2,3.50\ngadget,10,1.25\nthing,1,9.99\n"

func base(mimeType string) string {
	b, _, _ := strings.Cut(mimeType, ";")
	return strings.TrimSpace(b)
}

func TestDetect(t *testing.T) {
	pngData := pngBytes(t)
	tests := []struct {
		what string
		data []byte
		name string
		want string // compared without parameters unless it has some
	}{
		{"png", pngData, "chart.png", "image/png"},
		{"png without extension", pngData, "chart", "image/png"},
		{"png named pdf: content wins", pngData, "x.pdf", "image/png"},
		{"jpeg", jpegBytes(t), "photo.jpg", "image/jpeg"},
		{"jpeg named png: content wins", jpegBytes(t), "photo.png", "image/jpeg"},
		{"pdf", pdfBytes(), "invoice.pdf", "application/pdf"},
		{"pdf with no name", pdfBytes(), "", "application/pdf"},
		{"pdf named txt", pdfBytes(), "invoice.txt", "application/pdf"},
		{"docx", docxBytes(t), "letter.docx", mimeDocx},
		{"docx without extension", docxBytes(t), "letter", mimeDocx},
		{"docx named zip: content wins", docxBytes(t), "letter.zip", mimeDocx},
		{"pptx", pptxBytes(t), "deck.pptx", mimePptx},
		{"pptx without extension", pptxBytes(t), "deck", mimePptx},
		{"xlsx", xlsxBytes(t), "sheet.xlsx", mimeXlsx},
		{"xlsx without extension", xlsxBytes(t), "sheet", mimeXlsx},
		{"plain zip", plainZipBytes(t), "bundle.zip", "application/zip"},
		{"plain zip without extension", plainZipBytes(t), "bundle", "application/zip"},
		{"plain zip named pdf", plainZipBytes(t), "bundle.pdf", "application/zip"},
		{"markdown", []byte(markdown), "README.md", "text/markdown; charset=utf-8"},
		{"markdown upper-case extension", []byte(markdown), "README.MD", "text/markdown; charset=utf-8"},
		{"text without extension", []byte(markdown), "README", "text/plain; charset=utf-8"},
		{"text named png", []byte(markdown), "evil.png", "text/plain; charset=utf-8"},
		{"csv", []byte(csvText), "items.csv", "text/csv"},
		{"notes with commas named txt are text, not csv", []byte("milk, eggs\nbread, butter\ntea, coffee\n"), "notes.txt", "text/plain; charset=utf-8"},
		{"csv named txt", []byte(csvText), "notes.txt", "text/plain; charset=utf-8"},
		{"csv named json is not json", []byte(csvText), "items.json", "text/csv"},
		{"html named txt is not served as html", []byte("<!DOCTYPE html><html><body><script>alert(1)</script></body></html>"), "notes.txt", "text/plain; charset=utf-8"},
		{"empty pdf", nil, "a.pdf", "application/pdf"},
		{"empty without name", nil, "", filetype.Generic},
		{"empty with unknown extension", []byte{}, "a.unknownext", filetype.Generic},
		{"binary noise", noise(t, 4096), "blob.bin", "application/octet-stream"},
		{"windows path in name", []byte(markdown), `C:\docs\README.md`, "text/markdown; charset=utf-8"},
	}
	for _, tc := range tests {
		t.Run(tc.what, func(t *testing.T) {
			got := filetype.Detect(tc.data, tc.name)
			if got == "" {
				t.Fatal("Detect returned an empty type")
			}
			if strings.Contains(tc.want, ";") {
				if got != tc.want {
					t.Fatalf("Detect(%s, %q) = %q; want %q", tc.what, tc.name, got, tc.want)
				}
			} else if base(got) != tc.want {
				t.Fatalf("Detect(%s, %q) = %q; want %q", tc.what, tc.name, got, tc.want)
			}

			// DetectFile reads the same answer from disk, whatever the
			// file is called there (stores use random ids).
			path := filepath.Join(t.TempDir(), "0123456789abcdef")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			fromFile, err := filetype.DetectFile(path, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if fromFile != got {
				t.Fatalf("DetectFile = %q; Detect = %q", fromFile, got)
			}
			fromReader, err := filetype.DetectReader(bytes.NewReader(tc.data), tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if fromReader != got {
				t.Fatalf("DetectReader = %q; Detect = %q", fromReader, got)
			}
		})
	}
}

func noise(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[0] = 0x00 // never text, never a known magic number
	b[1] = 0xff
	return b
}

// TestDetectOfficeLargeHead checks the reason for SniffBytes: Office
// members that lie well past mimetype's default 3 KiB are still found.
func TestDetectOfficeLargeHead(t *testing.T) {
	bigXML := []byte(contentTypes + "<!--" + strings.Repeat("padding ", 8<<10) + "-->")
	data := zipBytes(t,
		entry{name: "[Content_Types].xml", content: bigXML, store: true},
		entry{name: "_rels/.rels", content: []byte(rels)},
		entry{name: "docProps/thumbnail.jpeg", content: noise(t, 100<<10), store: true},
		entry{name: "word/document.xml", content: []byte("<w:document/>")},
	)
	if idx := bytes.Index(data, []byte("word/document.xml")); idx < 64<<10 {
		t.Fatalf("test setup: word/ at offset %d; want it far into the file", idx)
	}
	for _, name := range []string{"big.docx", "big"} {
		if got := filetype.Detect(data, name); got != mimeDocx {
			t.Errorf("Detect(large docx, %q) = %q; want %q", name, got, mimeDocx)
		}
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := filetype.DetectFile(path, "big"); err != nil || got != mimeDocx {
		t.Errorf("DetectFile(large docx) = %q, %v; want %q", got, err, mimeDocx)
	}
}

// TestDetectLeavesMimetypeAlone: importing and using filetype does not change
// mimetype's global read limit, which other code in the program may rely on:
// mimetype itself still calls the large docx a zip.
func TestDetectLeavesMimetypeAlone(t *testing.T) {
	data := zipBytes(t,
		entry{name: "[Content_Types].xml", content: []byte(contentTypes)},
		entry{name: "docProps/thumbnail.jpeg", content: noise(t, 64<<10), store: true},
		entry{name: "word/document.xml", content: []byte("<w:document/>")},
	)
	if got := filetype.Detect(data, "upload"); got != mimeDocx {
		t.Errorf("filetype.Detect = %q; want %q", got, mimeDocx)
	}
	if got := mimetype.Detect(data).String(); got != "application/zip" {
		t.Errorf("mimetype.Detect = %q after filetype ran; want application/zip (its own 3 KiB limit untouched)", got)
	}
	notOffice := zipBytes(t,
		entry{name: "readme.txt", content: []byte("word/ xl/ ppt/")},
		entry{name: "word/document.xml", content: []byte("<w:document/>")},
	)
	if got := filetype.Detect(notOffice, "upload"); got != "application/zip" {
		t.Errorf("zip holding word/ but no package part first = %q; want application/zip", got)
	}
}

func TestDetectReaderReadsAtMostSniffBytes(t *testing.T) {
	r := &countingReader{data: append(pdfBytes(), make([]byte, 3*filetype.SniffBytes)...)}
	got, err := filetype.DetectReader(r, "x.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if base(got) != "application/pdf" {
		t.Fatalf("DetectReader = %q", got)
	}
	if r.read > filetype.SniffBytes {
		t.Fatalf("read %d bytes; want at most %d", r.read, filetype.SniffBytes)
	}
}

type countingReader struct {
	data []byte
	read int
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.read >= len(c.data) {
		return 0, fmt.Errorf("unexpected read past the end")
	}
	n := copy(p, c.data[c.read:])
	c.read += n
	return n, nil
}

func TestDetectFileMissing(t *testing.T) {
	if _, err := filetype.DetectFile(filepath.Join(t.TempDir(), "missing"), "a.pdf"); !os.IsNotExist(err) {
		t.Fatalf("DetectFile(missing) error = %v; want not-exist", err)
	}
}

func TestByName(t *testing.T) {
	for name, want := range map[string]string{
		"a.pdf":           "application/pdf",
		"A.PDF":           "application/pdf",
		"dir/report.pptx": mimePptx,
		`dir\sheet.xlsx`:  mimeXlsx,
		"images/d.png":    "image/png",
		"noext":           "",
		"":                "",
		".hidden":         "",
	} {
		got := filetype.ByName(name)
		if name == ".hidden" {
			continue // whatever the host's table says; just must not panic
		}
		if got != want {
			t.Errorf("ByName(%q) = %q; want %q", name, got, want)
		}
	}
}

func TestLabel(t *testing.T) {
	for mimeType, want := range map[string]string{
		mimePptx:                       "PowerPoint",
		mimeDocx:                       "Word",
		mimeXlsx:                       "Excel",
		"application/pdf":              "PDF",
		"image/png":                    "PNG image",
		"image/jpeg":                   "JPEG image",
		"image/tiff":                   "TIFF image",
		"audio/x-wav":                  "WAV audio",
		"text/markdown; charset=utf-8": "Markdown",
		"text/plain; charset=utf-8":    "Text",
		"text/csv":                     "CSV",
		"text/x-go":                    "Go text",
		"application/zip":              "ZIP archive",
		"application/octet-stream":     "binary",
		"application/x-custom":         "application/x-custom",
		"":                             "file",
	} {
		if got := filetype.Label(mimeType); got != want {
			t.Errorf("Label(%q) = %q; want %q", mimeType, got, want)
		}
	}
}

// TestLabelMalformed: Label is called on types that come from metadata and
// clients; nonsense must give some label, never a panic.
func TestLabelMalformed(t *testing.T) {
	for _, mimeType := range []string{"text", "text/", "image/", "/", ";", "text/;", "???"} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Label(%q) panicked: %v", mimeType, r)
				}
			}()
			if got := filetype.Label(mimeType); got == "" {
				t.Errorf("Label(%q) is empty", mimeType)
			}
		}()
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{
		0:                  "0 B",
		812:                "812 B",
		1023:               "1023 B",
		1024:               "1 KB",
		240 * 1024:         "240 KB",
		1048576:            "1.0 MB",
		1572864:            "1.5 MB",
		50 * 1048576:       "50.0 MB",
		3 * 1024 * 1048576: "3.0 GB",
	} {
		if got := filetype.Size(n); got != want {
			t.Errorf("Size(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestDescribe(t *testing.T) {
	if got, want := filetype.Describe("report.pptx", mimePptx, 1048576), "report.pptx (PowerPoint, 1.0 MB)"; got != want {
		t.Fatalf("Describe = %q; want %q", got, want)
	}
	if got, want := filetype.Describe("invoice.pdf", "application/pdf", 240*1024), "invoice.pdf (PDF, 240 KB)"; got != want {
		t.Fatalf("Describe = %q; want %q", got, want)
	}
	if got, want := filetype.Describe("images/diagram_002.png", "image/png", 812), "images/diagram_002.png (PNG image, 812 B)"; got != want {
		t.Fatalf("Describe = %q; want %q", got, want)
	}
}

// ExampleDescribe shows how a produced file is named to a model: type from
// content and name, size for people.
func ExampleDescribe() {
	var deck bytes.Buffer
	w := zip.NewWriter(&deck)
	for _, name := range []string{"[Content_Types].xml", "_rels/.rels", "ppt/presentation.xml"} {
		f, _ := w.Create(name)
		f.Write([]byte("<x/>"))
	}
	w.Close()

	mimeType := filetype.Detect(deck.Bytes(), "report.pptx")
	fmt.Println(filetype.Label(mimeType))
	fmt.Println(filetype.Describe("report.pptx", mimeType, 1048576))
	fmt.Println(filetype.Describe("scan.png", "image/png", 812))
	// Output:
	// PowerPoint
	// report.pptx (PowerPoint, 1.0 MB)
	// scan.png (PNG image, 812 B)
}

func TestSizeRoundsUpToTheNextUnit(t *testing.T) {
	for n, want := range map[int64]string{1048575: "1.0 MB", 1048064: "1.0 MB", 1047552: "1023 KB", 1<<30 - 1: "1.0 GB", 1023 << 20: "1023.0 MB"} {
		if got := filetype.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestAgrees(t *testing.T) {
	for _, c := range []struct {
		declared, detected string
		want               bool
	}{
		{"application/pdf", "application/pdf", true},
		{"text/plain; charset=utf-8", "text/plain", true},
		{"text/markdown", "text/plain; charset=utf-8", true},
		{"application/json", "text/plain; charset=utf-8", true},
		{"application/octet-stream", "image/png", true},
		{"application/zip", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", true},
		{"application/pdf", "image/png", false},
		{"image/png", "image/jpeg", false},
		{"text/plain", "application/pdf", false},
		{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "application/zip", false},
		{"not a type", "image/png", false},
	} {
		if got := filetype.Agrees(c.declared, c.detected); got != c.want {
			t.Errorf("Agrees(%q, %q) = %v, want %v", c.declared, c.detected, got, c.want)
		}
	}
}
