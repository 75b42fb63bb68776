package composer

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
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
			if img.Format != "png" || img.FileName != tc.wantFile || img.Width != 8 || img.Height != 4 || !plainPNG(img.Data) {
				t.Errorf("got %s %s %d×%d (plain PNG %v), want an 8-bit PNG %s, 8×4", img.Format, img.FileName, img.Width, img.Height, plainPNG(img.Data), tc.wantFile)
			}
			onDisk, err := os.ReadFile(img.Path)
			if err != nil || !bytes.Equal(onDisk, img.Data) || filepath.Ext(img.Path) != ".png" {
				t.Errorf("Path %s does not hold the converted PNG (%v)", img.Path, err)
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
