package ocr

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the tracer of the agent's spans: one a page recognised,
// under the span of the tool call (docs/observability.md).
const tracerName = "github.com/agentura/agentura/agents/ocr"

// The attributes of a page's span: which page, of how many, in which
// languages. Never the file's name, its text or a path.
var (
	attrPage      = attribute.Key("agentura.ocr.page")
	attrPagesRead = attribute.Key("agentura.ocr.pages_read")
	attrPageCount = attribute.Key("agentura.ocr.page_count")
	attrLanguages = attribute.Key("agentura.ocr.languages")
)

// startPage starts the span of one tesseract run: page (from 1) of a
// document of count pages, reading read pages (1 for a PDF's page; all of
// them for an image or a TIFF, which one tesseract run reads whole).
func startPage(ctx context.Context, page, read, count int, langs []string) (context.Context, trace.Span) {
	return otel.Tracer(tracerName).Start(ctx, "ocr page", trace.WithAttributes(
		attrPage.Int(page), attrPagesRead.Int(read), attrPageCount.Int(count),
		attrLanguages.String(strings.Join(langs, "+"))))
}

// endPage ends span with err's outcome; paths are cut from its words.
func endPage(span trace.Span, err error, paths ...string) {
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, spanReason(err, paths...))
	}
	span.End()
}

// maxReason caps the words of a span's status.
const maxReason = 512

// spanReason is err in the words a caller reads ("tesseract failed: exit
// status 1: …", "the document took longer than …"), without the paths
// given (the input's, which holds its name, and the work folder's) and
// capped. A cancelled page says so and no more.
func spanReason(err error, paths ...string) string {
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	s := err.Error()
	for _, p := range paths {
		if p != "" {
			s = strings.ReplaceAll(s, p, "…")
		}
	}
	if len(s) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// slotAcquired notes on the span of ctx when a command got its engine
// slot: the time before it is the wait behind other pages and calls.
func slotAcquired(ctx context.Context, name string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("engine slot acquired", trace.WithAttributes(attribute.String("agentura.ocr.command", base(name))))
	}
}
