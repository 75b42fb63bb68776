package ocr

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// TIFF tags the inspection reads.
const (
	tagImageWidth      = 256
	tagImageLength     = 257
	tagStripOffsets    = 273
	tagStripByteCounts = 279
	tagTileOffsets     = 324
	tagTileByteCounts  = 325
)

// maxTIFFEntries bounds an IFD's tag count and a strip or tile table, so a
// forged header cannot make the inspection itself expensive.
const maxTIFFEntries = 1 << 16

// inspectTIFF walks a TIFF's chain of image file directories (one per page):
// it counts the pages, refusing more than MaxPages, checks each page's size
// in pixels, and checks that every strip or tile lies inside the file, so a
// truncated TIFF is refused. golang.org/x/image/tiff reads only the first
// page; tesseract reads them all, so they are all checked.
func (a *Agent) inspectTIFF(path string) (pages int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	t := &tiffReader{r: f, size: st.Size()}
	var hdr [8]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return 0, corrupt("the TIFF header is incomplete")
	}
	switch string(hdr[:2]) {
	case "II":
		t.order = binary.LittleEndian
	case "MM":
		t.order = binary.BigEndian
	default:
		return 0, corrupt("the TIFF header has no byte order mark")
	}
	switch t.order.Uint16(hdr[2:4]) {
	case 42:
	case 43:
		return 0, fmt.Errorf("it is a BigTIFF, which this agent does not read: save it as an ordinary TIFF, or as PNG or PDF")
	default:
		return 0, corrupt("the TIFF header has a wrong version number")
	}
	seen := map[int64]bool{}
	for off := int64(t.order.Uint32(hdr[4:8])); off != 0; {
		if seen[off] {
			return 0, corrupt("the TIFF's pages form a loop")
		}
		seen[off] = true
		pages++
		if pages > a.cfg.MaxPages {
			return 0, fmt.Errorf("the TIFF has more than %d pages, the limit (AGENT_OCR_MAX_PAGES): split it", a.cfg.MaxPages)
		}
		next, err := a.inspectIFD(t, off, pages)
		if err != nil {
			return 0, err
		}
		off = next
	}
	if pages == 0 {
		return 0, corrupt("the TIFF has no pages")
	}
	return pages, nil
}

// inspectIFD checks the page whose directory is at off and returns the offset
// of the next directory (0 after the last page).
func (a *Agent) inspectIFD(t *tiffReader, off int64, page int) (int64, error) {
	var cnt [2]byte
	if err := t.readAt(cnt[:], off); err != nil {
		return 0, err
	}
	n := int64(t.order.Uint16(cnt[:]))
	entries := make([]byte, n*12+4)
	if err := t.readAt(entries, off+2); err != nil {
		return 0, err
	}
	tags := map[uint16][]byte{}
	for i := range n {
		e := entries[i*12 : i*12+12]
		tags[t.order.Uint16(e[:2])] = e
	}
	width, err := t.scalar(tags[tagImageWidth])
	if err != nil {
		return 0, err
	}
	height, err := t.scalar(tags[tagImageLength])
	if err != nil {
		return 0, err
	}
	if err := a.checkPixels(page, int(min(width, 1<<31-1)), int(min(height, 1<<31-1)), ""); err != nil {
		return 0, err
	}
	offsets, counts := tags[tagStripOffsets], tags[tagStripByteCounts]
	if offsets == nil {
		offsets, counts = tags[tagTileOffsets], tags[tagTileByteCounts]
	}
	if err := t.checkData(offsets, counts); err != nil {
		return 0, err
	}
	return int64(t.order.Uint32(entries[n*12:])), nil
}

// tiffReader reads the parts of a TIFF file the inspection needs.
type tiffReader struct {
	r     io.ReaderAt
	size  int64
	order binary.ByteOrder
}

func (t *tiffReader) readAt(p []byte, off int64) error {
	if off < 0 || off+int64(len(p)) > t.size {
		return corrupt("the TIFF points past its end (it may be truncated)")
	}
	if _, err := t.r.ReadAt(p, off); err != nil {
		return corrupt("the TIFF cannot be read: %v", err)
	}
	return nil
}

// values returns the numbers of the IFD entry e, a SHORT or LONG array.
func (t *tiffReader) values(e []byte) ([]int64, error) {
	if e == nil {
		return nil, nil
	}
	typ, count := t.order.Uint16(e[2:4]), int64(t.order.Uint32(e[4:8]))
	width := map[uint16]int64{3: 2, 4: 4}[typ] // bytes of a SHORT (3), a LONG (4)
	if width == 0 {
		return nil, corrupt("TIFF tag %d has type %d, not a whole number", t.order.Uint16(e[:2]), typ)
	}
	if count > maxTIFFEntries {
		return nil, corrupt("TIFF tag %d claims %d values", t.order.Uint16(e[:2]), count)
	}
	data := e[8:12]
	if count*width > 4 {
		data = make([]byte, count*width)
		if err := t.readAt(data, int64(t.order.Uint32(e[8:12]))); err != nil {
			return nil, err
		}
	}
	vals := make([]int64, count)
	for i := range vals {
		if width == 2 {
			vals[i] = int64(t.order.Uint16(data[i*2:]))
		} else {
			vals[i] = int64(t.order.Uint32(data[i*4:]))
		}
	}
	return vals, nil
}

// scalar returns the single number of a required entry.
func (t *tiffReader) scalar(e []byte) (int64, error) {
	v, err := t.values(e)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, corrupt("a TIFF page has no width or height")
	}
	return v[0], nil
}

// checkData checks that every strip or tile of a page lies inside the file.
func (t *tiffReader) checkData(offsetsEntry, countsEntry []byte) error {
	offsets, err := t.values(offsetsEntry)
	if err != nil {
		return err
	}
	counts, err := t.values(countsEntry)
	if err != nil {
		return err
	}
	if len(offsets) == 0 || len(offsets) != len(counts) {
		return corrupt("a TIFF page has no image data")
	}
	for i, off := range offsets {
		if off+counts[i] > t.size {
			return corrupt("the TIFF's image data runs past its end (it may be truncated)")
		}
	}
	return nil
}
