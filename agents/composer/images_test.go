package composer

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
)

// writeTemp writes data into a fresh folder under name and returns the path.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadImageConversionHalvesThePixels: a picture that must be converted
// is decoded whole, so it may have half the pixels of one placed as it is.
func TestLoadImageConversionHalvesThePixels(t *testing.T) {
	deep := image.NewRGBA64(image.Rect(0, 0, 8, 8)) // 64 pixels, 16-bit
	var deepPNG bytes.Buffer
	if err := png.Encode(&deepPNG, deep); err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "deep.png", deepPNG.Bytes())
	if _, err := loadImage("deep.png", "deep.png", path, "image/png", 100, nil); err == nil || !strings.Contains(err.Error(), "8-bit PNG or JPEG") {
		t.Errorf("a 64-pixel 16-bit PNG under a 100-pixel limit: %v; want a refusal saying to send 8-bit PNG or JPEG", err)
	}
	if _, err := loadImage("deep.png", "deep.png", path, "image/png", 128, nil); err != nil {
		t.Errorf("under a 128-pixel limit: %v", err)
	}
}

func TestLoadImageConverts(t *testing.T) {
	deep := image.NewRGBA64(image.Rect(0, 0, 8, 4)) // 16-bit: fpdf cannot place it
	deep.Set(1, 1, color.RGBA64{R: 0xffff, A: 0xffff})
	var deepPNG, bmpData bytes.Buffer
	if err := png.Encode(&deepPNG, deep); err != nil {
		t.Fatal(err)
	}
	if err := bmp.Encode(&bmpData, deep); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, mime string
		data       []byte
		wantFile   string
	}{
		{"deep.png", "image/png", deepPNG.Bytes(), "deep.png"},
		{"scan.bmp", "image/bmp", bmpData.Bytes(), "scan.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := loadImage(tc.name, tc.name, writeTemp(t, tc.name, tc.data), tc.mime, 1000, nil)
			if err != nil {
				t.Fatal(err)
			}
			onDisk, err := os.ReadFile(img.Path)
			if err != nil || filepath.Ext(img.Path) != ".png" || img.byteSize() != int64(len(onDisk)) {
				t.Errorf("Path %s does not hold the converted PNG (%v)", img.Path, err)
			}
			if img.Format != "png" || img.FileName != tc.wantFile || img.Width != 8 || img.Height != 4 || !plainPNG(onDisk) {
				t.Errorf("got %s %s %d×%d (plain PNG %v), want an 8-bit PNG %s, 8×4", img.Format, img.FileName, img.Width, img.Height, plainPNG(onDisk), tc.wantFile)
			}
			if cfg, err := png.DecodeConfig(bytes.NewReader(onDisk)); err != nil || cfg.Width != 8 || cfg.Height != 4 {
				t.Errorf("the converted PNG reads as %+v (%v), want 8×4", cfg, err)
			}
		})
	}
}

func TestLoadImageRefuses(t *testing.T) {
	small := textPNG(t, "x", 40, 30, color.White)
	for _, tc := range []struct {
		name, mime string
		data       []byte
		maxPixels  int64
		want       string
	}{
		{"notes.txt", "text/plain; charset=utf-8", []byte("hello"), 1e6, `embed "notes.txt" is Text (text/plain), not an image`},
		{"big.png", "image/png", small, 1000, `embed "big.png" is 40×30 pixels`},
		{"cut.png", "image/png", small[:len(small)-20], 1e6, `embed "cut.png" is a truncated or damaged PNG`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadImage(tc.name, tc.name, writeTemp(t, tc.name, tc.data), tc.mime, tc.maxPixels, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// Issue 39: a picture is checked through small buffers and held by no
// Image, and Markdown, HTML and PPTX copy it from its file as they write:
// loading a 64 MiB picture (under another file name, so it is copied) and
// rendering it in those formats each allocate a small fraction of it.
func TestPicturesAreNotHeldInMemory(t *testing.T) {
	side := 4096 // 64 MiB of RGBA pixels, stored uncompressed
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	var raw bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&raw, img); err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "upload.bin", raw.Bytes())
	// PPTX's zip writer takes about 1 MiB of its own; under the race
	// detector sync.Pool drops a quarter of what is put back, so some of the
	// deflated parts get a new flate writer (2.4 to 5.6 MiB measured). A
	// quarter of the picture stays far below holding it once.
	most := uint64(raw.Len() / 4)
	var pic *Image
	if grew := totalAlloc(func() {
		var err error
		if pic, err = loadImage("p.png", "p.png", path, "image/png", DefaultLimits().ImagePixels, nil); err != nil {
			t.Fatal(err)
		}
	}); grew > most {
		t.Errorf("loading a %d MiB picture allocated %d KiB, want under %d", raw.Len()>>20, grew>>10, most>>10)
	}
	if pic.Data != nil || pic.byteSize() != int64(raw.Len()) {
		t.Errorf("the Image holds %d bytes of the picture and counts %d, want none held and %d counted", len(pic.Data), pic.byteSize(), raw.Len())
	}
	if copied, err := os.ReadFile(pic.Path); err != nil || !bytes.Equal(copied, raw.Bytes()) || filepath.Base(pic.Path) != "img-p.png" {
		t.Errorf("%s does not hold the picture (%v)", pic.Path, err)
	}
	doc := Parse([]byte("![x](p.png)"), "")
	if err := doc.bind(map[string]*Image{"p.png": pic}); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"md", "html", "pptx"} {
		var out countWriter
		grew := totalAlloc(func() {
			if err := doc.Write(&out, format); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
		})
		if grew > most {
			t.Errorf("%s: rendering the %d MiB picture allocated %d KiB, want under %d", format, raw.Len()>>20, grew>>10, most>>10)
		}
		if format != "md" && out.n < int64(raw.Len()) {
			t.Errorf("%s: %d bytes written, fewer than the picture's %d", format, out.n, raw.Len())
		}
	}
}

// totalAlloc returns the bytes f allocates.
func totalAlloc(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// complete reads only the end of a JPEG or GIF, past whatever padding
// follows it, and walks a PNG's chunks to IEND.
func TestCompleteReadsTheEnd(t *testing.T) {
	pad := bytes.Repeat([]byte{0}, 10<<10) // more than one read from the end
	small := textPNG(t, "x", 40, 30, color.White)
	for _, tc := range []struct {
		name, format string
		data         []byte
		want         bool
	}{
		{"jpeg", "jpeg", []byte("\xff\xd8 data \xff\xd9"), true},
		{"jpeg padded", "jpeg", append([]byte("\xff\xd8 data \xff\xd9\r\n "), pad...), true},
		{"jpeg cut", "jpeg", []byte("\xff\xd8 data \xff"), false},
		{"jpeg cut, padded", "jpeg", append([]byte("\xff\xd8 data"), pad...), false},
		{"jpeg of padding", "jpeg", pad, false},
		{"gif", "gif", []byte("GIF89a;"), true},
		{"gif padded", "gif", append([]byte("GIF89a;"), pad...), true},
		{"gif cut", "gif", []byte("GIF89a"), false},
		{"png", "png", small, true},
		{"png cut", "png", small[:len(small)-20], false},
		{"png without IEND", "png", small[:len(small)-12], false},
	} {
		if got := complete(tc.format, bytes.NewReader(tc.data), int64(len(tc.data))); got != tc.want {
			t.Errorf("%s: complete %v, want %v", tc.name, got, tc.want)
		}
	}
}
