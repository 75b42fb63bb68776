package composer

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/draw"
	_ "image/gif" // decoders for image.DecodeConfig and re-encoding
	_ "image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/agentura/agentura/filetype"
)

// Image is an embedded picture ready for every renderer: PNG, JPEG or GIF
// data that fpdf, Word, PowerPoint and browsers all read.
type Image struct {
	// Name is the embed's name as the Markdown refers to it.
	Name string
	// FileName is the name the picture gets as a file of its own
	// (images/<FileName> in Markdown output): the embed's sanitised name,
	// with the extension of its format.
	FileName string
	// Description is what the embed says the picture shows.
	Description string
	// Format is "png", "jpeg" or "gif".
	Format string
	// MIMEType is the format's media type.
	MIMEType string
	// Width and Height are the size in pixels.
	Width, Height int
	// Data is the encoded picture when it is held in memory, or nil when
	// it is read from Path as it is rendered. The loader leaves it nil:
	// a picture is read whole only by a renderer that needs it whole.
	Data []byte
	// Path is a file holding the encoded picture, named FileName (godocx
	// reads pictures from files and takes their type from the extension).
	Path string

	size int64 // the length of the file at Path, when Data is nil
}

// imageFormat names the format of a picture of type mimeType, or "" when
// it is not one; formats other than PNG, JPEG and GIF are converted to PNG.
func imageFormat(mimeType string) string {
	mimeType, _, _ = strings.Cut(mimeType, ";")
	switch f := strings.TrimPrefix(strings.TrimSpace(mimeType), "image/"); f {
	case "png", "jpeg", "gif", "webp", "bmp", "tiff":
		return f
	}
	return ""
}

// acceptedImages names the accepted formats for error messages.
const acceptedImages = "PNG, JPEG, GIF, WebP, BMP or TIFF"

// loadImage checks the embed at path (its detected type mimeType) and
// describes it as an Image. name is the embed's name, fileName its
// sanitised file name. Pictures with more than maxPixels pixels are refused
// before they are decoded. A picture that must be converted to PNG spends
// its pixels from convert (nil: no budget) and is refused, before it is
// decoded, when that runs out: decoding is what costs, and a small
// compressed file may hold a huge image. The checks read the file through
// small buffers; the Image refers to the file (Path) and holds no copy of
// it, so a picture costs memory only where a renderer reads it whole.
func loadImage(name, fileName, path, mimeType string, maxPixels int64, convert *pixelBudget) (*Image, error) {
	format := imageFormat(mimeType)
	if format == "" {
		mimeType, _, _ = strings.Cut(mimeType, ";")
		return nil, fmt.Errorf("embed %q is %s (%s), not an image: embeds must be pictures (%s); mention other files in the markdown as text or links instead",
			name, filetype.Label(mimeType), mimeType, acceptedImages)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read embed %q: %w", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read embed %q: %w", name, err)
	}
	size := st.Size()
	cfg, decFormat, err := image.DecodeConfig(bufio.NewReader(io.NewSectionReader(f, 0, size)))
	if err != nil {
		return nil, fmt.Errorf("embed %q looks like %s but cannot be read (%v): send the picture file itself, not a damaged or truncated copy", name, strings.ToUpper(format), err)
	}
	if !complete(decFormat, f, size) {
		return nil, fmt.Errorf("embed %q is a truncated or damaged %s (it does not end as the format requires): send the whole picture file", name, strings.ToUpper(decFormat))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("embed %q has no pixels (%d×%d)", name, cfg.Width, cfg.Height)
	}
	if int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return nil, fmt.Errorf("embed %q is %d×%d pixels, more than the %d million allowed: scale it down first", name, cfg.Width, cfg.Height, maxPixels/1_000_000)
	}
	if decFormat == "png" {
		if err := pngInflatedSize(f, size); err != nil {
			return nil, fmt.Errorf("embed %q is refused: %v; send a correctly encoded PNG, or the picture as JPEG", name, err)
		}
	}
	img := &Image{Name: name, Width: cfg.Width, Height: cfg.Height, Format: decFormat, size: size}
	head := make([]byte, 32)
	n, _ := f.ReadAt(head, 0)
	converted := needsConversion(decFormat, head[:n])
	if converted {
		// 16-bit or interlaced PNGs (which fpdf cannot place) and formats
		// Office may not show are converted to 8-bit PNG.
		// A conversion holds the whole picture decoded (up to 8 bytes a
		// pixel for 16-bit colour) beside its 8-bit copy: such a picture
		// may have half the pixels of one placed as it is, which keeps the
		// largest allowed within the composer's 512 MiB container.
		if int64(cfg.Width)*int64(cfg.Height) > maxPixels/2 {
			return nil, fmt.Errorf("embed %q (%s, %d×%d) must be converted to 8-bit PNG, and a picture converted here may have at most %d million pixels: send it as 8-bit PNG or JPEG, or scale it down",
				name, strings.ToUpper(decFormat), cfg.Width, cfg.Height, maxPixels/2/1_000_000)
		}
		if convert != nil {
			if convert.left -= int64(cfg.Width) * int64(cfg.Height); convert.left < 0 {
				return nil, fmt.Errorf("embed %q (%s, %d×%d) would take the pictures to convert to PNG past the %d million pixels allowed in one document: send WebP, BMP, TIFF and 16-bit or interlaced PNG pictures as 8-bit PNG or JPEG, or smaller",
					name, strings.ToUpper(decFormat), cfg.Width, cfg.Height, convert.limit/1_000_000)
			}
		}
		img.Format = "png"
	}
	img.MIMEType = "image/" + img.Format
	img.FileName = withExt(fileName, img.Format)
	img.Path = path
	if !converted && filepath.Base(path) == img.FileName {
		return img, nil
	}
	img.Path = filepath.Join(filepath.Dir(path), "img-"+img.FileName)
	if converted {
		decoded, _, err := image.Decode(bufio.NewReader(io.NewSectionReader(f, 0, size)))
		if err == nil {
			img.size, err = writePNG(img.Path, decoded)
		}
		if err != nil {
			return nil, fmt.Errorf("embed %q: convert %s to PNG: %w", name, strings.ToUpper(decFormat), err)
		}
		return img, nil
	}
	if err := copyFile(img.Path, f); err != nil {
		return nil, fmt.Errorf("embed %q: %w", name, err)
	}
	return img, nil
}

// pixelBudget is how many pixels the pictures of one document may still
// have converted, of limit.
type pixelBudget struct{ left, limit int64 }

// needsConversion reports whether a picture of the decoded format, whose
// file starts with head (29 bytes are enough), is converted to 8-bit PNG
// before it is placed: a 16-bit or interlaced PNG, which fpdf cannot place,
// and any format but PNG, JPEG and GIF, which Office may not show. The
// loader and the memory budget ask the same question here.
func needsConversion(format string, head []byte) bool {
	return format == "png" && !plainPNG(head) || format != "png" && format != "jpeg" && format != "gif"
}

// plainPNG reports whether a PNG is 8-bit (or less) and not interlaced, the
// kind fpdf embeds as it is.
func plainPNG(data []byte) bool {
	// Signature (8), IHDR length and type (8), width, height (8), then bit
	// depth, colour type, compression, filter, interlace.
	if len(data) < 29 || string(data[12:16]) != "IHDR" {
		return false
	}
	depth, interlace := data[24], data[28]
	return depth <= 8 && interlace == 0
}

// complete reports whether a PNG, JPEG or GIF of size bytes, read from r,
// ends as its format requires (the IEND chunk, the EOI marker, the
// trailer): DecodeConfig reads only the header, and a cut-off picture would
// fail in a renderer, or show broken. Other formats are decoded in full
// when converted, which checks them.
func complete(format string, r io.ReaderAt, size int64) bool {
	switch format {
	case "png":
		chunks := bufio.NewReaderSize(io.NewSectionReader(r, 8, size-8), 64<<10)
		head := make([]byte, 8)
		for pos := int64(8); pos+12 <= size; {
			if _, err := io.ReadFull(chunks, head); err != nil {
				return false
			}
			n := int64(binary.BigEndian.Uint32(head))
			if pos+12+n > size {
				return false
			}
			if string(head[4:8]) == "IEND" {
				return true
			}
			if _, err := chunks.Discard(int(n) + 4); err != nil {
				return false
			}
			pos += 12 + n
		}
		return false
	case "jpeg":
		end := lastBytes(r, size, 2)
		return len(end) == 2 && end[0] == 0xFF && end[1] == 0xD9
	case "gif":
		end := lastBytes(r, size, 1)
		return len(end) == 1 && end[0] == 0x3B
	}
	return true
}

// lastBytes returns the last n bytes of the size bytes of r before the
// NULs, line breaks and spaces that may pad its end (fewer when it has
// fewer).
func lastBytes(r io.ReaderAt, size int64, n int) []byte {
	buf := make([]byte, 4<<10)
	var tail []byte // the bytes past those looked for, read backwards
	for end := size; end > 0 && len(tail) < n; {
		start := max(end-int64(len(buf)), 0)
		got := buf[:end-start]
		if _, err := r.ReadAt(got, start); err != nil && !errors.Is(err, io.EOF) {
			return nil
		}
		if len(tail) == 0 {
			got = bytes.TrimRight(got, "\x00\r\n ")
		}
		tail = append(bytes.Clone(got), tail...)
		end = start
	}
	return tail[max(len(tail)-n, 0):]
}

// writePNG encodes src as an 8-bit PNG into a new file at path and returns
// its length.
func writePNG(path string, src image.Image) (int64, error) {
	var img image.Image = src
	switch src.(type) {
	case *image.RGBA, *image.NRGBA, *image.Gray, *image.Paletted:
	default:
		dst := image.NewNRGBA(src.Bounds())
		draw.Draw(dst, dst.Bounds(), src, src.Bounds().Min, draw.Src)
		img = dst
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	err = enc.Encode(bw, img)
	if err == nil {
		err = bw.Flush()
	}
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekCurrent)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return size, err
}

// copyFile copies the file src into a new file at path.
func copyFile(path string, src *os.File) error {
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		dst.Close()
		return err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

// withExt gives name the extension of format, keeping one that already fits.
func withExt(name, format string) string {
	ext := strings.ToLower(filepath.Ext(name))
	want := map[string][]string{"png": {".png"}, "jpeg": {".jpg", ".jpeg"}, "gif": {".gif"}}[format]
	if slices.Contains(want, ext) {
		return name
	}
	return strings.TrimSuffix(name, filepath.Ext(name)) + want[0]
}

// errNoImages marks a figure whose reference names no embed.
var errNoImages = errors.New("image not embedded")

// bind sets the Image of every figure from images (keyed by embed name) and
// reports the first reference that names no embed, listing those given.
func (d *Document) bind(images map[string]*Image) error {
	for _, f := range figures(d.Blocks) {
		img := lookupImage(images, f.Ref)
		if img == nil {
			return fmt.Errorf("%w: the markdown shows image %q, but no embed has that name; %s. Add an embed {\"name\": %q, \"content\": <the picture>} or refer to one of the embeds by its name",
				errNoImages, f.Ref, embedList(images), baseName(f.Ref))
		}
		f.Image = img
	}
	return nil
}

// lookupImage finds the embed ref names: by the name itself, then by its last
// path segment (so images/chart.png finds chart.png).
func lookupImage(images map[string]*Image, ref string) *Image {
	if img, ok := images[ref]; ok {
		return img
	}
	if img, ok := images[baseName(ref)]; ok {
		return img
	}
	for _, img := range images {
		if img.FileName == baseName(ref) {
			return img
		}
	}
	return nil
}

// baseName is ref's last path segment (after a slash or backslash).
func baseName(ref string) string {
	return ref[strings.LastIndexAny(ref, `/\`)+1:]
}

// embedList says which embeds a call has, for error messages.
func embedList(images map[string]*Image) string {
	if len(images) == 0 {
		return "the call has no embeds"
	}
	names := make([]string, 0, len(images))
	for n := range images {
		names = append(names, fmt.Sprintf("%q", n))
	}
	slices.Sort(names)
	return "the embeds given are " + strings.Join(names, ", ")
}

// fitBox shrinks a w×h box, aspect kept, until it fits in maxW×maxH; a box
// that fits already is kept as it is.
func fitBox(w, h, maxW, maxH float64) (float64, float64) {
	if w > maxW {
		w, h = maxW, h*maxW/w
	}
	if h > maxH {
		w, h = w*maxH/h, maxH
	}
	return w, h
}

// open returns a reader of the encoded picture: Data, or the file at Path.
func (img *Image) open() (io.ReadCloser, error) {
	if img.Data != nil {
		return io.NopCloser(bytes.NewReader(img.Data)), nil
	}
	return os.Open(img.Path)
}

// copyTo writes the encoded picture to w, from Data or the file at Path.
func (img *Image) copyTo(w io.Writer) error {
	r, err := img.open()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(w, r)
	return err
}

// byteSize is the length of the encoded picture.
func (img *Image) byteSize() int64 {
	if img.Data != nil {
		return int64(len(img.Data))
	}
	return img.size
}
