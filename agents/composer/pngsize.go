package composer

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// pngInflatedSize checks, before any renderer sees a PNG, that its pixel
// data (the IDAT chunks) inflates to no more than the picture its header
// declares: height rows of one filter byte and width × bits per pixel. fpdf
// inflates the whole IDAT stream of an alpha PNG into memory whatever the
// header says, so a 16×16 header over 1 GiB of deflated zeros (a 1 MB file)
// would cost 1 GiB. The stream is inflated here through a 32 KiB window and
// stopped just past the bound, so the check costs no memory.
func pngInflatedSize(data []byte) error {
	if len(data) < 33 || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || string(data[12:16]) != "IHDR" {
		return errors.New("not a PNG")
	}
	w, h := int64(binary.BigEndian.Uint32(data[16:20])), int64(binary.BigEndian.Uint32(data[20:24]))
	depth, colour, interlace := int64(data[24]), data[25], data[28]
	channels := map[byte]int64{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
	if channels == 0 || depth == 0 {
		return fmt.Errorf("PNG colour type %d with bit depth %d is not valid", colour, depth)
	}
	rowBytes := (w*channels*depth + 7) / 8
	limit := h * (1 + rowBytes)
	if interlace != 0 {
		// Seven passes: each row of each pass has its own filter byte and
		// may round up to a whole byte.
		limit += 14*h + 64
	}
	zr, err := zlib.NewReader(&idatReader{data: data, pos: 8})
	if err != nil {
		return fmt.Errorf("its pixel data is not a zlib stream (%v)", err)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(zr, limit+1))
	if n > limit {
		return fmt.Errorf("its pixel data inflates to more than the %d bytes a %d×%d picture holds (a decompression bomb)", limit, w, h)
	}
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("its pixel data is damaged (%v)", err)
	}
	return nil
}

// idatReader reads the data of a PNG's IDAT chunks one after another.
type idatReader struct {
	data []byte
	pos  int    // the next chunk
	cur  []byte // what is left of the current IDAT chunk
}

func (r *idatReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.pos+12 > len(r.data) {
			return 0, io.EOF
		}
		n := int(binary.BigEndian.Uint32(r.data[r.pos:]))
		typ := string(r.data[r.pos+4 : r.pos+8])
		if n < 0 || r.pos+12+n > len(r.data) || typ == "IEND" {
			return 0, io.EOF
		}
		if typ == "IDAT" {
			r.cur = r.data[r.pos+8 : r.pos+8+n]
		}
		r.pos += 12 + n
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}
