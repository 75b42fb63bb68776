package tasks

import (
	"cmp"
	"context"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/agentura/agentura/internal/lib/mcptrace"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// A task keeps its trace (docs/observability.md): its work, which runs on
// after the answer, is a span ("task <tool>") under the request span that
// made the task, ending when the task ends, with its status. The task's
// record keeps that span's W3C trace context (traceparent and tracestate,
// never baggage, whose values are the caller's and may hold anything), so
// that a replica that records the task's end in its stead (its lease ran
// out) continues the same trace ("task lapsed <tool>"), and each read of
// the task (tasks/get, tasks/result, tasks/cancel; A2A tasks/get) links its
// request span to the task's: a poll from another process is found from
// the task's trace. The task's id is never an attribute: it is what
// reaches a task under AGENT_AUTH=none, like a signed URL a file.

// tracerName is the tracer of the tasks' spans.
const tracerName = "github.com/agentura/agentura/agentcore/tasks"

// Attributes of the tasks' spans.
var (
	attrStatus   = attribute.Key("agentura.task.status")
	attrReason   = attribute.Key("agentura.task.status_message")
	attrProtocol = attribute.Key("agentura.task.protocol")
	attrLinkKind = attribute.Key("agentura.link.kind")
)

// traceContext is the propagator of what a task record keeps: W3C trace
// context alone.
var traceContext = propagation.TraceContext{}

// Trace is the W3C trace context a task record keeps: its "traceparent"
// and "tracestate".
type Trace map[string]string

// traceOf is the trace context of ctx's span, nil when it has none
// (tracing off and no caller's trace).
func traceOf(ctx context.Context) Trace {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	c := propagation.MapCarrier{}
	traceContext.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return Trace(c)
}

// spanContext is the span context tr names; invalid for none.
func (tr Trace) spanContext() trace.SpanContext {
	if tr["traceparent"] == "" {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(traceContext.Extract(context.Background(), propagation.MapCarrier(tr)))
}

// tracer is the global provider's tracer of the tasks' spans.
func tracer() trace.Tracer { return otel.Tracer(tracerName) }

// startWork starts the span of a task's work, tool of protocol ("mcp"), a
// child of ctx's span (the request that made the task).
func startWork(ctx context.Context, tool, protocol string) (context.Context, trace.Span) {
	return tracer().Start(ctx, "task "+tool, trace.WithAttributes(
		mcptrace.AttrToolName.String(tool), mcptrace.AttrOperationName.String("execute_tool"), attrProtocol.String(protocol)))
}

// endWork ends span, of task t's work (or of its end recorded by another
// replica), with the task's status (setEnd).
func endWork(span trace.Span, status, message string, toolError bool) {
	if span.IsRecording() {
		setEnd(span, status, message, toolError)
	}
	span.End()
}

// setEnd records a task's status on its span: a failure or a tool's error
// is an error of the span with the words its caller reads, scrubbed; a
// cancel says so in agentura.task.status and its message, not as an error.
func setEnd(span trace.Span, status, message string, toolError bool) {
	span.SetAttributes(attrStatus.String(status))
	words := mcptrace.Scrub(message)
	switch {
	case status == Failed:
		span.SetAttributes(mcptrace.AttrErrorType.String(Failed))
		span.SetStatus(codes.Error, words)
	case toolError:
		span.SetAttributes(mcptrace.AttrErrorType.String("tool_error"))
		span.SetStatus(codes.Error, words)
	case status == Cancelled:
		span.SetAttributes(attrReason.String(words))
	case status == Working:
		// The end was not recorded (the store failed): the lease runs
		// out and any replica reports the task failed.
		span.SetStatus(codes.Error, "the task's end was not recorded")
	}
}

// endTask ends span with how MCP task t ended.
func endTask(span trace.Span, t *Task) {
	endWork(span, t.Status, t.Message, t.Status == Completed && t.Result != nil && t.Result.IsError)
}

// recordTakeover makes the span of an end this replica recorded for a
// task another replica ran (its lease ran out), in the task's trace tr:
// "task lapsed <tool>", a child of the task's work span.
func recordTakeover(ctx context.Context, tr Trace, tool, protocol, status, reason string) {
	sc := tr.spanContext()
	if !sc.IsValid() {
		return
	}
	name, attrs := "task lapsed", []attribute.KeyValue{attrProtocol.String(protocol)}
	if tool != "" {
		name += " " + tool
		attrs = append(attrs, mcptrace.AttrToolName.String(tool))
	}
	_, span := tracer().Start(trace.ContextWithRemoteSpanContext(context.WithoutCancel(ctx), sc), name, trace.WithAttributes(attrs...),
		trace.WithLinks(linkFrom(ctx)...))
	endWork(span, status, reason, false)
}

// linkFrom is a link to ctx's span (the request that found the task
// lapsed), when it has one.
func linkFrom(ctx context.Context) []trace.Link {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return []trace.Link{{SpanContext: sc, Attributes: []attribute.KeyValue{attrLinkKind.String("request")}}}
	}
	return nil
}

// Link links ctx's span (a request reading a task: tasks/get, tasks/result,
// a cancel) to the span of the task's work, whose trace tr names, so that
// a poll from any process is found from the task's trace.
func Link(ctx context.Context, tr Trace) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	if sc := tr.spanContext(); sc.IsValid() {
		span.AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attrLinkKind.String("task")}})
	}
}

// EndsOn is q, the event queue of A2A task id's execution (of owner),
// recording on span (the execution's, which lasts as long as the task's
// work) the status the task ends with: its final status update's state and
// message (the words its caller reads), as endWork does for an MCP task.
// ended, called with the execution's context as it returns, records when no
// final update came through q the end another replica claimed (a cancel
// there; ledger nil: none is looked for), else, the context canceled, the
// cancel a2a-go made here.
func EndsOn(q eventqueue.Queue, span trace.Span, ledger *Ledger, owner, id string) (_ eventqueue.Queue, ended func(context.Context)) {
	if !span.IsRecording() {
		return q, func(context.Context) {}
	}
	e := &endingQueue{Queue: q, span: span}
	return e, func(ctx context.Context) {
		e.mu.Lock()
		recorded := e.recorded
		e.mu.Unlock()
		if recorded {
			return
		}
		if ledger != nil {
			if end, ok, err := ledger.Ended(context.WithoutCancel(ctx), owner, id); err == nil && ok {
				why := "the task ended " + end.Status + " on another replica"
				if end.Status == Cancelled {
					why = "canceled by the caller" // what the task's status says
				}
				e.record(end.Status, cmp.Or(end.Reason, why))
				return
			}
		}
		if ctx.Err() != nil {
			// a2a-go canceled the execution and reported the end through
			// the executor's Cancel, on a queue this one does not see.
			e.record(Cancelled, "canceled by the caller")
		}
	}
}

// endingQueue is EndsOn's queue.
type endingQueue struct {
	eventqueue.Queue
	span trace.Span

	mu       sync.Mutex
	recorded bool // a terminal status is on the span
}

// Write records a terminal status update on the span, then writes it.
func (e *endingQueue) Write(ctx context.Context, ev a2a.Event) error {
	if up, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && up.Status.State.Terminal() {
		var words string
		if m := up.Status.Message; m != nil {
			for _, p := range m.Parts {
				if tp, ok := PartOf[a2a.TextPart](p); ok {
					words += tp.Text
				}
			}
		}
		e.record(a2aEnd(up.Status.State), words)
	}
	return e.Queue.Write(ctx, ev)
}

// record sets the task's status and its words on the span, once.
func (e *endingQueue) record(status, words string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.recorded {
		return
	}
	e.recorded = true
	e.span.SetAttributes(attrProtocol.String("a2a"))
	setEnd(e.span, status, words, false)
}
