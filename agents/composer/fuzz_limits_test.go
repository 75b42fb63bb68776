package composer

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/attackdata"
)

// FuzzImageHeader feeds arbitrary bytes to the picture checks that run
// before any renderer (the header, completeness and the PNG inflate bound):
// they never panic, and a PNG they accept decodes within its declared size.
func FuzzImageHeader(f *testing.F) {
	f.Add(onePixelPNG)
	f.Add(attackdata.PNGBomb(4, 4, 1<<16))
	f.Add(attackdata.RawPNG(1, 1, 6, []byte{0x78, 0x9c, 0x63, 0, 0, 0, 5, 0, 1}))
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte("GIF89a\x01\x00\x01\x00;"))
	f.Add([]byte("\xff\xd8\xff\xd9"))
	path := filepath.Join(f.TempDir(), "f.png")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		_ = pngInflatedSize(bytes.NewReader(data), int64(len(data)))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		img, err := loadImage("f.png", "f.png", path, "image/png", 1<<20, &pixelBudget{left: 1 << 20, limit: 1 << 20})
		if err != nil || img.Format != "png" {
			return
		}
		placed, err := os.ReadFile(img.Path)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(placed))
		if err == nil && int64(cfg.Width)*int64(cfg.Height) > 1<<20 {
			t.Errorf("accepted a %d×%d picture over the pixel limit", cfg.Width, cfg.Height)
		}
	})
}

// FuzzMarkdownLimits checks the Markdown limits that run before parsing:
// they never panic, and Markdown they let through parses quickly.
func FuzzMarkdownLimits(f *testing.F) {
	for _, md := range stressMarkdown {
		f.Add(md)
	}
	f.Add(strings.Repeat("[a](", 300))
	f.Add(strings.Repeat("> ", 40) + "x")
	f.Add(strings.Repeat("- ", 40) + "x")
	f.Add(strings.Repeat("[a](b) ", 600))
	f.Fuzz(func(t *testing.T, md string) {
		if len(md) > 64<<10 {
			return
		}
		lim := DefaultLimits()
		if checkNesting(md) != nil || checkLinkScan(md, lim.LinkScanBytes) != nil || checkParagraphLinks(md, lim.LinksPerParagraph) != nil {
			return
		}
		start := time.Now()
		doc := Parse([]byte(md), "")
		doc.count()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%d bytes of Markdown within the limits took %v to parse", len(md), d)
		}
		// The budget counted while parsing changes nothing of a document
		// it lets through, and lets through no table over its limits.
		small := Limits{Blocks: 40, TableCells: 12, Cells: 20}
		if limited, err := ParseLimited([]byte(md), "", small); err == nil {
			if !reflect.DeepEqual(limited, doc) {
				t.Errorf("ParseLimited made another document than Parse")
			}
			if tl := limited.count(); tl.cells > small.Cells || tl.widest != nil && tl.widest.cells() > small.TableCells {
				t.Errorf("ParseLimited let %d cells through (widest table %d)", tl.cells, tl.widest.cells())
			}
		}
	})
}
