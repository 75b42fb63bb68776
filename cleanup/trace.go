package cleanup

import (
	"context"
	"fmt"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/mcptrace"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the tracer of the sweeper's spans: one a sweep, one an
// area swept under it (docs/observability.md).
const tracerName = "github.com/agentura/agentura/cleanup"

// What started a sweep: a call of Sweep, or Start's first sweep, or the
// schedule.
const (
	triggerCall     = "call"
	triggerStartup  = "startup"
	triggerSchedule = "schedule"
)

// The attributes of the sweeper's spans: counts, sizes and the area.
// Never a file's name or id: a sweep's span is about the store, not its
// files.
var (
	attrTrigger  = attribute.Key("agentura.cleanup.trigger")
	attrArea     = attribute.Key("agentura.file.area")
	attrExamined = attribute.Key("agentura.cleanup.files_examined")
	attrRemoved  = attribute.Key("agentura.cleanup.files_removed")
	attrFreed    = attribute.Key("agentura.cleanup.bytes_freed")
	attrRecords  = attribute.Key("agentura.cleanup.records_removed")
	attrErrors   = attribute.Key("agentura.cleanup.errors")
	attrLag      = attribute.Key("agentura.cleanup.lag_ms")
)

// startSweep starts a sweep's span; one the start-up or the schedule
// started is a new trace's root, whatever ctx holds.
func startSweep(ctx context.Context, trigger string) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithAttributes(attrTrigger.String(trigger))}
	if trigger != triggerCall {
		opts = append(opts, trace.WithNewRoot())
	}
	return otel.Tracer(tracerName).Start(ctx, "cleanup sweep", opts...)
}

// endSweep ends span with the sweep's counts and, when it failed or was
// cut short, why (the first error's words, scrubbed).
func endSweep(span trace.Span, st Stats, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attrExamined.Int(st.Examined), attrRemoved.Int(st.Files), attrFreed.Int64(st.Bytes),
		attrRecords.Int(st.Records), attrErrors.Int(st.Errors), attrLag.Int64(st.Lag.Milliseconds()))
	if err != nil {
		span.SetStatus(codes.Error, mcptrace.Scrub(err.Error()))
	}
}

// startArea starts the span of sweeping one area, under the sweep's.
func startArea(ctx context.Context, area fileserve.Area) (context.Context, trace.Span) {
	return otel.Tracer(tracerName).Start(ctx, "cleanup area", trace.WithAttributes(attrArea.String(string(area))))
}

// endArea ends span with what the area's sweep added to the sweep's
// stats: from before to after.
func endArea(span trace.Span, before Stats, after *Stats) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attrExamined.Int(after.Examined-before.Examined), attrRemoved.Int(after.Files-before.Files),
		attrFreed.Int64(after.Bytes-before.Bytes), attrErrors.Int(after.Errors-before.Errors))
	if n := after.Errors - before.Errors; n > 0 {
		span.SetStatus(codes.Error, fmt.Sprintf("%d errors deleting or pruning the area; the sweep's span has the first", n))
	}
}
