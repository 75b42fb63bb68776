package ocr

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	_ "image/jpeg" // image.DecodeConfig reads JPEG headers
	_ "image/png"  // and PNG headers
	"io"
	"os"
	"strings"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/filetype"
)

// The kinds of input the agent reads.
const (
	kindImage = "image" // one PNG or JPEG, or a TIFF of one or more pages
	kindPDF   = "pdf"
)

// source is an input that passed every check: tesseract may read it.
type source struct {
	*agentcore.InputFile
	Kind  string
	Pages int
}

// inspect checks f before any engine sees it: its type from its content, its
// header (a corrupt or truncated file is refused), its size in pixels read
// from the header alone (a decompression bomb is refused before it is
// decoded), and its page count.
func (a *Agent) inspect(ctx context.Context, f *agentcore.InputFile) (*source, error) {
	src := &source{InputFile: f, Kind: kindImage, Pages: 1}
	var err error
	switch f.MIMEType {
	case "image/png":
		err = a.inspectPNG(f.Path)
	case "image/jpeg":
		err = a.inspectJPEG(f.Path)
	case "image/tiff":
		src.Pages, err = a.inspectTIFF(f.Path)
	case "application/pdf":
		src.Kind = kindPDF
		src.Pages, err = a.inspectPDF(ctx, f.Path)
	default:
		return nil, notReadable(f)
	}
	if err != nil {
		return nil, err
	}
	return src, nil
}

// notReadable is the error of an input that is neither an image nor a PDF;
// it says what the file is.
func notReadable(f *agentcore.InputFile) error {
	what := filetype.Label(f.MIMEType)
	advice := "send a PNG, JPEG, TIFF or PDF file"
	switch {
	case f.MIMEType == filetype.Generic:
		what = "not a file type this agent knows"
	case strings.HasPrefix(f.MIMEType, "image/"):
		advice = "convert it to PNG first"
	case strings.HasPrefix(f.MIMEType, "text/"):
		advice = "it is text already: no OCR needed"
	}
	return fmt.Errorf("it is %s (%s), not an image or a PDF: ocr-agent reads PNG, JPEG, TIFF and PDF files; %s",
		what, f.MIMEType, advice)
}

// errCorrupt marks an input whose bytes are not what its type promises.
var errCorrupt = errors.New("the file is corrupt or truncated")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s; send the original file again", errCorrupt, fmt.Sprintf(format, args...))
}

// checkPixels refuses a page larger than the limits, before it is decoded.
func (a *Agent) checkPixels(page, width, height int, unit string) error {
	where := "the image"
	if page > 0 {
		where = fmt.Sprintf("page %d", page)
	}
	if width <= 0 || height <= 0 {
		return corrupt("%s claims a size of %d × %d pixels", where, width, height)
	}
	if width > maxSide || height > maxSide {
		return fmt.Errorf("%s is %d × %d pixels%s; tesseract reads at most %d pixels a side: scale it down",
			where, width, height, unit, maxSide)
	}
	if px := int64(width) * int64(height); px > a.cfg.MaxPixels {
		return fmt.Errorf("%s is %d × %d pixels%s, %.1f megapixels, over the limit of %.1f megapixels (AGENT_OCR_MAX_PIXELS): scale it down or split it",
			where, width, height, unit, float64(px)/1e6, float64(a.cfg.MaxPixels)/1e6)
	}
	return nil
}

// openImage opens the image at path, reads its size from its header and
// checks it; the caller closes the file.
func (a *Agent) openImage(path, format string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	cfg, _, err := image.DecodeConfig(f)
	if err == nil {
		err = a.checkPixels(0, cfg.Width, cfg.Height, "")
	} else {
		err = corrupt("its %s header cannot be read (%v)", format, err)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// inspectPNG reads the PNG's header for its size, then walks its chunks,
// checking each one's CRC, up to IEND: a damaged or truncated PNG is refused
// without decoding a pixel.
func (a *Agent) inspectPNG(path string) error {
	f, err := a.openImage(path, "PNG")
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(8, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReader(f)
	var head [8]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return corrupt("the PNG ends before its IEND chunk")
		}
		n := binary.BigEndian.Uint32(head[:4])
		if n > 1<<31-1 {
			return corrupt("a PNG chunk claims %d bytes", n)
		}
		crc := crc32.NewIEEE()
		crc.Write(head[4:])
		if _, err := io.CopyN(crc, r, int64(n)); err != nil {
			return corrupt("the PNG ends inside its %q chunk", head[4:])
		}
		var sum [4]byte
		if _, err := io.ReadFull(r, sum[:]); err != nil {
			return corrupt("the PNG ends inside its %q chunk", head[4:])
		}
		if binary.BigEndian.Uint32(sum[:]) != crc.Sum32() {
			return corrupt("the PNG's %q chunk fails its checksum", head[4:])
		}
		if string(head[4:]) == "IEND" {
			return nil
		}
	}
}

// jpegTail is how much of a JPEG's end is searched for its end-of-image
// marker; some writers append a little after it.
const jpegTail = 16 << 10

// inspectJPEG reads the JPEG's header for its size and checks that the file
// reaches its end-of-image marker: a truncated JPEG is refused.
func (a *Agent) inspectJPEG(path string) error {
	f, err := a.openImage(path, "JPEG")
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	off := max(0, st.Size()-jpegTail)
	tail := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(tail, off); err != nil {
		return err
	}
	// In the compressed data a 0xFF byte is always followed by 0x00 or a
	// restart marker, so 0xFF 0xD9 there is the end of the image.
	if !bytes.Contains(tail, []byte{0xFF, 0xD9}) {
		return corrupt("the JPEG has no end-of-image marker")
	}
	return nil
}
