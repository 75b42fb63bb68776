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
// bytes) takes to render in format: its bytes where they are read whole
// (in PDF and DOCX, whose libraries read a picture whole, and for a
// picture converted to 8-bit PNG: other formats, 16-bit or interlaced PNG);
// for a converted picture its pixels decoded at up to 8 bytes beside their
// 4-byte copy; and in PDF, whose library decodes a PNG or GIF to split
// colour and transparency, 4 bytes a pixel. Markdown, HTML and PowerPoint
// copy a picture placed as it is from its file as they write it: it takes
// them no memory.
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
	converted := needsConversion(kind, head[:n])
	var need int64
	if converted || format == "pdf" || format == "docx" {
		need += size
	}
	if converted {
		need += 12 * pixels
	}
	if format == "pdf" && kind != "jpeg" {
		need += 4 * pixels
	}
	return need
}

// pictureMemory is the memory the pictures of all calls running at once
// may hold (Limits.PictureMemory): PDF and DOCX read their pictures whole,
// and a conversion decodes one (before it was bounded, four calls each
// with a 40 MiB inline picture composed to Markdown, which then read its
// pictures whole too, peaked at 212 MiB together). A call takes what its
// pictures need before it reads them (renderMemory) and gives it back when
// its output is stored; a call whose pictures do not fit beside the
// others' waits for them (until its context ends), one whose pictures need
// more than all of it is refused.
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
