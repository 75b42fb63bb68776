// Package attackdata makes the hostile inputs the attack, fuzz and memory
// tests send: decompression bombs and the like, built in memory so no large
// file is kept in the repository.
package attackdata

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
)

// PNGBomb returns a valid-looking PNG whose header declares a w×h RGBA
// picture and whose single IDAT chunk inflates to inflated bytes of zeros
// (deflated to about inflated/1000 bytes).
func PNGBomb(w, h uint32, inflated int64) []byte {
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	zero := make([]byte, 1<<20)
	for left := inflated; left > 0; left -= int64(len(zero)) {
		zw.Write(zero[:min(int64(len(zero)), left)])
	}
	zw.Close()
	return RawPNG(w, h, 6, idat.Bytes())
}

// RawPNG assembles a PNG of 8-bit colour type colour (6: RGBA) from the
// given IDAT payload, without checking that it fits the header.
func RawPNG(w, h uint32, colour byte, idat []byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, colour
	chunk(&b, "IHDR", ihdr)
	chunk(&b, "IDAT", idat)
	chunk(&b, "IEND", nil)
	return b.Bytes()
}

func chunk(b *bytes.Buffer, typ string, data []byte) {
	binary.Write(b, binary.BigEndian, uint32(len(data)))
	crc := crc32.NewIEEE()
	b.WriteString(typ)
	crc.Write([]byte(typ))
	b.Write(data)
	crc.Write(data)
	binary.Write(b, binary.BigEndian, crc.Sum32())
}
