// Package ocrtest makes the inputs of the OCR agent's tests: known text
// rendered into PNG, JPEG and TIFF images and into scanned-looking PDFs
// (pages that are images, with no text layer), and it requires the external
// commands the tests need (internal/testkit/requiretool: a missing one skips the test
// on a laptop and fails it under AGENTURA_REQUIRE_TOOLS=1, as in CI).
package ocrtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"testing"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/tiff"

	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// FontSize is the size text is rendered at, in pixels: large enough for
// tesseract to read it without a doubt.
const FontSize = 48

// DPI is the resolution the rendered images stand for: a PDF page holding
// one is sized so that pdftoppm at 300 dpi renders it pixel for pixel.
const DPI = 300

// Require ends the test unless every command is on PATH, saying how to
// install it: the OCR tests need the real engine, never a stand-in. A
// missing command skips the test, or fails it under AGENTURA_REQUIRE_TOOLS=1
// (CI); see internal/testkit/requiretool.
func Require(t testing.TB, commands ...string) {
	t.Helper()
	for _, c := range commands {
		install := "apt-get install poppler-utils (.ci/apt.d/ocr.txt)"
		if c == "tesseract" {
			install = "apt-get install tesseract-ocr tesseract-ocr-eng (.ci/apt.d/ocr.txt)"
		}
		requiretool.Command(t, c, install)
	}
}

// Render draws lines of black text on a white image in the Go font.
func Render(t testing.TB, lines ...string) *image.Gray {
	t.Helper()
	return RenderFont(t, goregular.TTF, lines...)
}

// SystemFont returns the font file at path, or fails the test saying which
// Debian package installs it.
func SystemFont(t testing.TB, path, pkg string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the test draws its text with %s: install the Debian package %s (see .ci/apt.d/ocr.txt): %v", path, pkg, err)
	}
	return b
}

// RenderFont draws lines of black text on a white image in the TrueType or
// OpenType font ttf. The font's glyphs are drawn through its cmap in the
// order given, without shaping: right-to-left text is given in visual
// order, Arabic in its presentation forms.
func RenderFont(t testing.TB, ttf []byte, lines ...string) *image.Gray {
	t.Helper()
	f, err := opentype.Parse(ttf)
	if err != nil {
		t.Fatalf("parse font: %v", err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: FontSize, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		t.Fatalf("make font face: %v", err)
	}
	defer face.Close()
	const margin = FontSize
	lineHeight := FontSize * 3 / 2
	width := 0
	for _, l := range lines {
		width = max(width, font.MeasureString(face, l).Ceil())
	}
	img := image.NewGray(image.Rect(0, 0, width+2*margin, len(lines)*lineHeight+2*margin))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: face}
	for i, l := range lines {
		d.Dot = fixed.P(margin, margin+(i+1)*lineHeight-FontSize/3)
		d.DrawString(l)
	}
	return img
}

// PNG encodes img as PNG.
func PNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatalf("encode PNG: %v", err)
	}
	return b.Bytes()
}

// JPEG encodes img as JPEG.
func JPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatalf("encode JPEG: %v", err)
	}
	return b.Bytes()
}

// TIFF encodes img as a one-page TIFF.
func TIFF(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := tiff.Encode(&b, img, &tiff.Options{Compression: tiff.Deflate}); err != nil {
		t.Fatalf("encode TIFF: %v", err)
	}
	return b.Bytes()
}

// PDF makes a scanned-looking PDF: each page is one image of the given
// lines, sized at DPI, with no text layer.
func PDF(t testing.TB, pages ...[]string) []byte {
	t.Helper()
	return PDFFont(t, goregular.TTF, pages...)
}

// PDFFont is PDF with the lines drawn in the font ttf (see RenderFont).
func PDFFont(t testing.TB, ttf []byte, pages ...[]string) []byte {
	t.Helper()
	imgs := make([]*image.Gray, len(pages))
	for i, lines := range pages {
		imgs[i] = RenderFont(t, ttf, lines...)
	}
	return ImagePDF(t, imgs...)
}

// ImagePDF makes a scanned-looking PDF of one image a page, each sized at
// DPI. An image given for several pages is stored once: a test's large page
// is rendered and encoded once, however many pages show it.
func ImagePDF(t testing.TB, pages ...*image.Gray) []byte {
	t.Helper()
	doc := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 100, Ht: 100}})
	doc.SetCompression(true)
	names := map[*image.Gray]string{}
	for i, img := range pages {
		w := float64(img.Bounds().Dx()) * 72 / DPI
		h := float64(img.Bounds().Dy()) * 72 / DPI
		doc.AddPageFormat("P", fpdf.SizeType{Wd: w, Ht: h})
		name, ok := names[img]
		if !ok {
			name = fmt.Sprintf("page%d", i) // fpdf keys images by name
			names[img] = name
			doc.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(PNG(t, img)))
		}
		doc.ImageOptions(name, 0, 0, w, h, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	}
	var b bytes.Buffer
	if err := doc.Output(&b); err != nil {
		t.Fatalf("write PDF: %v", err)
	}
	return b.Bytes()
}

// PDFText returns the text layer of a PDF, as pdftotext reads it; pages are
// separated by form feeds.
func PDFText(t testing.TB, pdf []byte) string {
	t.Helper()
	Require(t, "pdftotext")
	cmd := exec.Command("pdftotext", "-layout", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := procgroup.Output(cmd)
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, stderr.String())
	}
	return string(out)
}

// Size is the width and height of a page, in pixels.
type Size struct{ W, H uint32 }

// RawTIFF writes a little-endian TIFF by hand, one directory per page, each
// claiming the given size and pointing at one strip of stripBytes bytes, of
// which only the first `present` are in the file: a way to make TIFFs that
// lie about their size, or are cut short, without a gigabyte of pixels.
func RawTIFF(pages []Size, stripBytes, present uint32) []byte {
	dataAt := tiffIFDsEnd(len(pages))
	var b []byte
	for i, p := range pages {
		b = appendTIFFPage(b, len(pages), i, p, dataAt, stripBytes)
	}
	return append(b, make([]byte, present)...)
}

// GrayTIFF writes a multi-page TIFF of grey images, uncompressed, a page
// per image: x/image/tiff writes only one page.
func GrayTIFF(pages ...*image.Gray) []byte {
	var b []byte
	at := tiffIFDsEnd(len(pages))
	for i, img := range pages {
		size := Size{W: uint32(img.Rect.Dx()), H: uint32(img.Rect.Dy())}
		b = appendTIFFPage(b, len(pages), i, size, at, size.W*size.H)
		at += size.W * size.H
	}
	for _, img := range pages {
		for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
			b = append(b, img.Pix[img.PixOffset(img.Rect.Min.X, y):img.PixOffset(img.Rect.Max.X, y)]...)
		}
	}
	return b
}

const (
	tiffEntries = 6
	tiffIFDSize = 2 + tiffEntries*12 + 4
)

// tiffIFDsEnd is where the data of a hand-made TIFF of n pages starts: after
// the header and the n directories.
func tiffIFDsEnd(n int) uint32 { return 8 + tiffIFDSize*uint32(n) }

// appendTIFFPage appends page i of n (the header first, for page 0): a
// directory of an 8-bit grey image of the given size whose one strip of
// stripBytes bytes starts at dataAt.
func appendTIFFPage(b []byte, n, i int, size Size, dataAt, stripBytes uint32) []byte {
	le := binary.LittleEndian
	if i == 0 {
		b = append(b, 'I', 'I', 42, 0)
		b = le.AppendUint32(b, 8)
	}
	b = le.AppendUint16(b, tiffEntries)
	entry := func(tag, typ uint16, val uint32) {
		b = le.AppendUint16(b, tag)
		b = le.AppendUint16(b, typ)
		b = le.AppendUint32(b, 1)
		b = le.AppendUint32(b, val)
	}
	entry(256, 4, size.W)     // ImageWidth
	entry(257, 4, size.H)     // ImageLength
	entry(258, 3, 8)          // BitsPerSample
	entry(262, 3, 1)          // PhotometricInterpretation: black is zero
	entry(273, 4, dataAt)     // StripOffsets
	entry(279, 4, stripBytes) // StripByteCounts
	next := uint32(0)
	if i < n-1 {
		next = 8 + tiffIFDSize*uint32(i+1)
	}
	return le.AppendUint32(b, next)
}

// PNGHeader writes a PNG of one all-zero row's worth of data that claims
// to be w × h pixels: a decompression bomb's header, read without decoding.
func PNGHeader(w, h uint32) []byte {
	chunk := func(b []byte, typ string, data []byte) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		start := len(b)
		b = append(b, typ...)
		b = append(b, data...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 0, 0, 0, 0) // 8-bit grey, no interlace
	b := []byte("\x89PNG\r\n\x1a\n")
	b = chunk(b, "IHDR", ihdr)
	b = chunk(b, "IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	return chunk(b, "IEND", nil)
}

// BigPagePDF is a one-page PDF whose page is w × h points, drawn empty.
func BigPagePDF(t testing.TB, w, h float64) []byte {
	t.Helper()
	doc := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: w, Ht: h}})
	doc.AddPage()
	var b bytes.Buffer
	if err := doc.Output(&b); err != nil {
		t.Fatalf("write PDF: %v", err)
	}
	return b.Bytes()
}

// LockedPDF is a one-page PDF that opens only with a password.
func LockedPDF(t testing.TB) []byte {
	t.Helper()
	doc := fpdf.New("P", "pt", "A4", "")
	doc.SetProtection(fpdf.CnProtectPrint, "secret", "owner")
	doc.AddPage()
	doc.SetFont("Helvetica", "", 24)
	doc.Text(72, 72, "locked")
	var b bytes.Buffer
	if err := doc.Output(&b); err != nil {
		t.Fatalf("write PDF: %v", err)
	}
	return b.Bytes()
}
