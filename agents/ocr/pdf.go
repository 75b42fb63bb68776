package ocr

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentura/agentura/internal/lib/childproc"
)

// inspectPDF asks pdfinfo for the PDF's page count and page sizes: more than
// MaxPages pages is refused, and so is a page that would be larger than
// MaxPixels once rasterised at DPI. A PDF pdfinfo cannot open is corrupt, or
// locked with a password.
func (a *Agent) inspectPDF(ctx context.Context, path string) (int, error) {
	// Sizes of at most MaxPages+1 pages are listed: enough to refuse a
	// document of a million pages without listing them.
	out, err := a.engine.run(ctx, a.cfg.PDFInfo, "-f", "1", "-l", strconv.Itoa(a.cfg.MaxPages+1), path)
	if err != nil {
		var ce *commandError
		switch {
		case errors.As(err, &ce) && strings.Contains(strings.ToLower(ce.Stderr), "password"):
			return 0, fmt.Errorf("the PDF is locked with a password: send it unlocked")
		case errors.As(err, &ce):
			return 0, corrupt("pdfinfo cannot read the PDF (%s)", childproc.LastLine(ce.Stderr, ce.Err))
		}
		return 0, err
	}
	info, err := parsePDFInfo(out)
	if err != nil {
		return 0, err
	}
	if info.pages == 0 {
		return 0, fmt.Errorf("the PDF has no pages")
	}
	if info.pages > a.cfg.MaxPages {
		return 0, fmt.Errorf("the PDF has %d pages, more than the limit of %d (AGENT_OCR_MAX_PAGES): split it, or send the pages you need",
			info.pages, a.cfg.MaxPages)
	}
	for i, s := range info.sizes {
		w, h := pixelsAt(s[0]), pixelsAt(s[1])
		unit := fmt.Sprintf(" (%.0f × %.0f pt at %d dpi)", s[0], s[1], DPI)
		if err := a.checkPixels(i+1, w, h, unit); err != nil {
			return 0, err
		}
	}
	return info.pages, nil
}

// pixelsAt is the pixels of pts points (1/72 inch) rasterised at DPI.
func pixelsAt(pts float64) int {
	return int(min(math.Ceil(pts*DPI/72), math.MaxInt32))
}

type pdfInfo struct {
	pages int
	sizes [][2]float64 // width and height in points, page by page
}

// parsePDFInfo reads pdfinfo's "Pages:" line and its "Page N size: W x H pts"
// lines.
func parsePDFInfo(out []byte) (pdfInfo, error) {
	var info pdfInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "Pages:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return info, fmt.Errorf("read pdfinfo's page count %q: %w", line, err)
			}
			info.pages = n
			continue
		}
		f := strings.Fields(line)
		// Page    1 size: 612 x 792 pts (letter)
		if len(f) >= 7 && f[0] == "Page" && f[2] == "size:" && f[4] == "x" && f[6] == "pts" {
			w, err1 := strconv.ParseFloat(f[3], 64)
			h, err2 := strconv.ParseFloat(f[5], 64)
			if err := errors.Join(err1, err2); err != nil {
				return info, fmt.Errorf("read pdfinfo's page size %q: %w", line, err)
			}
			info.sizes = append(info.sizes, [2]float64{w, h})
		}
	}
	return info, sc.Err()
}

// rasterisePage renders page n of the PDF at path as a PNG file at DPI in
// dir and returns its path.
func (a *Agent) rasterisePage(ctx context.Context, path, dir string, n int) (string, error) {
	base := filepath.Join(dir, "page-"+strconv.Itoa(n))
	_, err := a.engine.heavy(ctx, a.cfg.PDFToPPM, "-r", strconv.Itoa(DPI), "-png", "-singlefile",
		"-f", strconv.Itoa(n), "-l", strconv.Itoa(n), path, base)
	if err != nil {
		var ce *commandError
		if errors.As(err, &ce) {
			return "", corrupt("pdftoppm cannot render page %d of the PDF (%s)", n, childproc.LastLine(ce.Stderr, ce.Err))
		}
		return "", err
	}
	if _, err := os.Stat(base + ".png"); err != nil {
		return "", fmt.Errorf("pdftoppm rendered no page %d: %w", n, err)
	}
	return base + ".png", nil
}
