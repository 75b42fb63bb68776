package composer

import (
	"context"
	"errors"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the tracer of the composer's spans: one a rendered
// document, under the span of the tool call (docs/observability.md).
const tracerName = "github.com/agentura/agentura/agents/composer"

// The attributes of a rendering's span: never the document's name, its
// title or its text.
var (
	attrFormat = attribute.Key("agentura.compose.format")
	attrBytes  = attribute.Key("agentura.compose.bytes")
	attrPages  = attribute.Key("agentura.compose.pages")
	attrSlides = attribute.Key("agentura.compose.slides")
)

// startRender starts the span of rendering a document in format.
func startRender(ctx context.Context, format string) trace.Span {
	_, span := otel.Tracer(tracerName).Start(ctx, "render document", trace.WithAttributes(attrFormat.String(format)))
	return span
}

// endRender ends span with what rendering wrote: written bytes, a PDF's
// pages, a deck's slides; or why it failed.
func endRender(span trace.Span, stats renderStats, written int64, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attrBytes.Int64(written))
	if stats.pages > 0 {
		span.SetAttributes(attrPages.Int(stats.pages))
	}
	if stats.slides > 0 {
		span.SetAttributes(attrSlides.Int(stats.slides))
	}
	if err != nil {
		span.SetStatus(codes.Error, renderFailure(err))
	}
}

// renderFailure is why rendering failed, in words that name no file: a
// limit's own message (numbers and sizes), else the kind of failure.
func renderFailure(err error) string {
	var pe *os.PathError
	switch {
	case errors.Is(err, errLimit):
		return err.Error()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	case errors.As(err, &pe):
		return "the output file could not be written: " + pe.Op + ": " + pe.Err.Error()
	}
	return "the document could not be rendered"
}
