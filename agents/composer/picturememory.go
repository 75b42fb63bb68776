package composer

import (
	"context"
	"fmt"
	"image"
	"io"
	"os"

	"golang.org/x/sync/semaphore"

	"github.com/agentura/agentura/filetype"
)

// renderMemory estimates the memory a picture (the file at path, of size
// bytes) takes to render in format: its bytes, read whole; for a picture
// converted to 8-bit PNG (other formats, 16-bit PNG) its pixels decoded at
// up to 8 bytes beside their 4-byte copy; and in PDF, whose library
// decodes a PNG or GIF to split colour and transparency, 4 bytes a pixel.
func renderMemory(path string, size int64, format string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return size
	}
	defer f.Close()
	head := make([]byte, 32)
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return size
	}
	cfg, kind, err := image.DecodeConfig(f)
	if err != nil {
		return size // refused when it is loaded
	}
	pixels := int64(cfg.Width) * int64(cfg.Height)
	need := size
	if needsConversion(kind, head[:n]) {
		need += 12 * pixels
	}
	if format == "pdf" && kind != "jpeg" {
		need += 4 * pixels
	}
	return need
}

// pictureMemory is the memory the pictures of all calls running at once
// may hold (Limits.PictureMemory): every format reads its pictures whole,
// and four calls each with a 40 MiB inline picture composed to Markdown
// peaked at 212 MiB together. A call takes its pictures' bytes before it
// reads them (their bytes, and the memory decoding them takes: renderMemory)
// and gives them back when its output is stored; a call whose pictures do
// not fit beside the others' waits for them (until its context ends), one
// whose pictures need more than all of it is refused.
type pictureMemory struct {
	sem   *semaphore.Weighted
	limit int64
}

func newPictureMemory(limit int64) *pictureMemory {
	return &pictureMemory{sem: semaphore.NewWeighted(limit), limit: limit}
}

// take waits for n bytes and returns the function that gives them back; a
// call that needs more than the whole limit is refused.
func (p *pictureMemory) take(ctx context.Context, n int64) (release func(), err error) {
	if n <= 0 {
		return func() {}, nil
	}
	if n > p.limit {
		return nil, fmt.Errorf("%w: the pictures would take about %s of memory to render, more than the %s the agent gives the pictures of the calls it runs at once; send fewer pictures, or smaller ones (fewer pixels)",
			errLimit, filetype.Size(n), filetype.Size(p.limit))
	}
	if err := p.sem.Acquire(ctx, n); err != nil {
		return nil, fmt.Errorf("waited for memory for %s of pictures while other documents were composed, until the call ended (%w): try again, or send smaller pictures",
			filetype.Size(n), err)
	}
	return func() { p.sem.Release(n) }, nil
}
