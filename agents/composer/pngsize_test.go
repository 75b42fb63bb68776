package composer

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"runtime"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/attackdata"
)

// E5: a 16×16 RGBA PNG whose IDAT inflates to 256 MiB is refused before
// any renderer sees it, at no memory cost; an honest PNG passes.
func TestPNGDecompressionBombIsRefusedCheaply(t *testing.T) {
	bomb := attackdata.PNGBomb(16, 16, 256<<20)
	path := writeTemp(t, "z.png", bomb)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := loadImage("z.png", "z.png", path, "image/png", 50_000_000, nil)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "decompression bomb") {
		t.Fatalf("PNG bomb: %v, want a refusal naming it", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("checking the bomb allocated %d MiB", grew>>20)
	}

	img := image.NewNRGBA(image.Rect(0, 0, 300, 200))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	img.Set(3, 3, color.NRGBA{1, 2, 3, 4})
	var honest bytes.Buffer
	png.Encode(&honest, img)
	if _, err := loadImage("a.png", "a.png", writeTemp(t, "a.png", honest.Bytes()), "image/png", 50_000_000, nil); err != nil {
		t.Errorf("honest RGBA PNG refused: %v", err)
	}
}
