package composer

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// pngInflatedSize checks, before any renderer sees a PNG (size bytes, read
// from r), that its pixel data (the IDAT chunks) inflates to no more than
// the picture its header declares: height rows of one filter byte and
// width × bits per pixel. fpdf inflates the whole IDAT stream of an alpha
// PNG into memory whatever the header says, so a 16×16 header over 1 GiB
// of deflated zeros (a 1 MB file) would cost 1 GiB. The file is read and
// the stream inflated through small buffers, and stopped just past the
// bound, so the check costs no memory.
func pngInflatedSize(r io.ReaderAt, size int64) error {
	data := make([]byte, 33)
	if n, _ := r.ReadAt(data, 0); n < len(data) || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || string(data[12:16]) != "IHDR" {
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
	zr, err := zlib.NewReader(&idatReader{r: bufio.NewReaderSize(io.NewSectionReader(r, 8, size-8), 64<<10), pos: 8, size: size})
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

// idatReader reads the data of a PNG's IDAT chunks one after another, from
// r, which reads the file from its first chunk on.
type idatReader struct {
	r    *bufio.Reader
	pos  int64 // where in the file r is
	size int64 // the file's length
	cur  int64 // what is left of the current IDAT chunk's data
	end  bool  // IEND, or the end of the chunks, was met
}

func (ir *idatReader) Read(p []byte) (int, error) {
	for ir.cur == 0 {
		if ir.end || ir.pos+12 > ir.size {
			return 0, io.EOF
		}
		if ir.pos > 8 { // the previous chunk's CRC
			if _, err := ir.r.Discard(4); err != nil {
				return 0, err
			}
			ir.pos += 4
			if ir.pos+12 > ir.size {
				return 0, io.EOF
			}
		}
		var head [8]byte
		if _, err := io.ReadFull(ir.r, head[:]); err != nil {
			return 0, err
		}
		n := int64(binary.BigEndian.Uint32(head[:4]))
		typ := string(head[4:])
		if ir.pos+12+n > ir.size || typ == "IEND" {
			ir.end = true
			return 0, io.EOF
		}
		ir.pos += 8
		if typ == "IDAT" {
			ir.cur = n
		} else {
			if _, err := ir.r.Discard(int(n)); err != nil {
				return 0, err
			}
			ir.pos += n
		}
	}
	if int64(len(p)) > ir.cur {
		p = p[:ir.cur]
	}
	n, err := ir.r.Read(p)
	ir.cur -= int64(n)
	ir.pos += int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}
