package cleanup_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/cleanup"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	"go.opentelemetry.io/otel"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Where a sweep's time goes (issue 38): the start-up sweep is the root of
// a trace of its own even when Start's context holds a span, a Sweep call
// is the child of its caller's span; each has the files examined, removed
// and the bytes freed, a child span per area, and a failing expirer's
// error with its URL's path and token cut (file names are off in spans by
// default, mcptrace.FileNames). No span holds a file's name.
func TestSweepSpans(t *testing.T) {
	flush := otlptest.Export(t)
	st := newStore(t)
	put(t, st, fileserve.Outputs, "alice", "secret-report.txt", []byte("old one"))
	put(t, st, fileserve.Outputs, "bob", "secret-budget.txt", []byte("old two!"))
	s := newSweeper(t, cleanup.Config{
		Store: st,
		Now:   at(time.Now().Add(outputTTL + time.Hour)),
		Expirers: []cleanup.Expirer{{Name: "uploads", TTL: time.Hour, Expire: func(context.Context, time.Time) (int, int64, error) {
			return 0, 0, errors.New("list https://store.example/uploads?X-Amz-Signature=abc&token=s3cr3t: refused")
		}}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx, starter := otel.Tracer("test").Start(ctx, "agent start")
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.StartupDone():
	case <-ctx.Done():
		t.Fatal("the start-up sweep did not end within a minute")
	}
	starter.End()
	callCtx, caller := otel.Tracer("test").Start(ctx, "operator sweep")
	if _, err := s.Sweep(callCtx); err == nil {
		t.Fatal("Sweep with a failing expirer: no error")
	}
	caller.End()

	spans := flush()
	sweeps := otlptest.Named(spans, "cleanup sweep")
	if len(sweeps) != 2 {
		t.Fatalf("%d sweep spans, want 2 (the start-up's and the call's)", len(sweeps))
	}
	for _, sw := range sweeps {
		switch trigger := sw.Attr("agentura.cleanup.trigger").GetStringValue(); trigger {
		case "startup":
			if len(sw.ParentSpanId) != 0 || otlptest.Hex(sw.TraceId) == starter.SpanContext().TraceID().String() {
				t.Errorf("start-up sweep: parent %x in trace %x, want the root of a trace of its own", sw.ParentSpanId, sw.TraceId)
			}
			if sw.Attr("agentura.cleanup.files_removed").GetIntValue() != 2 || sw.Attr("agentura.cleanup.bytes_freed").GetIntValue() != 15 ||
				sw.Attr("agentura.cleanup.files_examined").GetIntValue() < 2 {
				t.Errorf("start-up sweep: attributes %v, want 2 files (15 bytes) removed of at least 2 examined", sw.Attributes)
			}
		case "call":
			if !sw.ChildOf(caller.SpanContext().TraceID().String(), caller.SpanContext().SpanID().String()) {
				t.Errorf("called sweep: not the child of its caller's span")
			}
			if sw.Attr("agentura.cleanup.files_removed").GetIntValue() != 0 {
				t.Errorf("called sweep: attributes %v, want nothing left to remove", sw.Attributes)
			}
		default:
			t.Errorf("sweep span with trigger %q", trigger)
		}
		msg := sw.Status.GetMessage()
		if sw.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || sw.Attr("agentura.cleanup.errors").GetIntValue() != 1 ||
			!strings.Contains(msg, "expire uploads") || !strings.Contains(msg, "https://store.example/…") {
			t.Errorf("sweep span: status %v %q, errors %v; want the expirer's error", sw.Status.GetCode(), msg, sw.Attr("agentura.cleanup.errors"))
		}
		var areas []string
		for _, a := range otlptest.Named(spans, "cleanup area") {
			if a.ChildOf(otlptest.Hex(sw.TraceId), otlptest.Hex(sw.SpanId)) {
				areas = append(areas, a.Attr("agentura.file.area").GetStringValue())
				if a.Attr("agentura.file.area").GetStringValue() == string(fileserve.Outputs) && sw.Attr("agentura.cleanup.trigger").GetStringValue() == "startup" &&
					a.Attr("agentura.cleanup.files_removed").GetIntValue() != 2 {
					t.Errorf("outputs area span of the start-up sweep: %v, want 2 files removed", a.Attributes)
				}
			}
		}
		if len(areas) != 2 {
			t.Errorf("sweep span with areas %v under it, want outputs and staging", areas)
		}
	}
	otlptest.Clean(t, spans, "secret-report", "secret-budget", "s3cr3t", "X-Amz-Signature")
}
