package ocr

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentura/agentura/agentcore"
)

// read resolves, checks and recognises one file attachment within the
// per-document timeout, working in a fresh folder under work.
func (a *Agent) read(ctx context.Context, call *agentcore.Call, att agentcore.FileAttachment, req request) (*document, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, a.cfg.Timeout, timeoutError{a.cfg.Timeout})
	defer cancel()
	f, err := call.ResolveFileAttachment(ctx, att)
	if err != nil {
		return nil, err
	}
	doc, err := a.readFile(ctx, call, f, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return doc, nil
}

// readFile checks and recognises a resolved file.
func (a *Agent) readFile(ctx context.Context, call *agentcore.Call, f *agentcore.InputFile, req request) (*document, error) {
	src, err := a.inspect(ctx, f)
	if err != nil {
		return nil, err
	}
	work, err := call.WorkDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(work, "doc-")
	if err != nil {
		return nil, err
	}
	return a.recognize(ctx, src, req, dir)
}

// timeoutError is the cause of a document's context ending at
// Config.Timeout.
type timeoutError struct{ limit time.Duration }

func (e timeoutError) Error() string {
	return fmt.Sprintf("the document took longer than %v (AGENT_OCR_TIMEOUT): split it, or raise the limit", e.limit)
}

// Is makes a timeout a context.DeadlineExceeded to errors.Is.
func (e timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

func (a *Agent) ocrDocument(ctx context.Context, call *agentcore.Call, in DocumentInput) (*agentcore.Result, error) {
	req, err := a.request(ctx, in.Languages, in.Outputs)
	if err != nil {
		return nil, err
	}
	req.progress = call.Progress
	doc, err := a.read(ctx, call, in.Source, req)
	if err != nil {
		return nil, err
	}
	res := &agentcore.Result{}
	if len(doc.Files) > 0 {
		if res, err = call.FileResponse(ctx, doc.Files...); err != nil {
			return nil, err
		}
	}
	res.Text = doc.text()
	res.Data = doc.data()
	res.Data["languages"] = doc.Languages
	return res, nil
}

// text is a document's text for a model: a heading, then each page; pages
// are numbered when there are several.
func (d *document) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Text of %s (%s, %s):", d.Source, plural(len(d.Pages), "page"), strings.Join(d.Languages, "+"))
	for i, p := range d.Pages {
		if len(d.Pages) > 1 {
			fmt.Fprintf(&b, "\n\n--- page %d of %d ---", i+1, len(d.Pages))
		}
		b.WriteString("\n\n" + cmp.Or(p, "(no text found)"))
	}
	return b.String()
}

// Page is one page of structured output: its number, from 1, and its text.
type Page struct {
	Page int    `json:"page"`
	Text string `json:"text"`
}

// data is a document's structured output: the whole text (pages separated
// by form feeds, as tesseract and pdftotext write them) and each numbered
// page.
func (d *document) data() map[string]any {
	pages := make([]Page, len(d.Pages))
	for i, p := range d.Pages {
		pages[i] = Page{Page: i + 1, Text: p}
	}
	return map[string]any{
		"source":     d.Source,
		"page_count": len(d.Pages),
		"text":       strings.Join(d.Pages, "\f"),
		"pages":      pages,
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
