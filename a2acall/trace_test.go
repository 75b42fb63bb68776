package a2acall_test

import (
	"context"
	"testing"

	"github.com/agentura/agentura/a2acall"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	"github.com/agentura/agentura/internal/testkit/testagent"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// An A2A call is one trace with the agent's work (issue 38): a2acall's
// client span travels in the message's metadata, and the agent's span of
// the task is its remote child, named for the skill; a skill that fails
// leaves its reason on the agent's span.
func TestCallSkillCarriesTrace(t *testing.T) {
	spans := otlptest.Memory(t)
	srv := serveAgent(t, testagent.Options{})
	c := &a2acall.Client{Dir: t.TempDir()}
	if _, err := c.CallSkill(context.Background(), srv.Base, "nothing", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallSkill(context.Background(), srv.Base, "echo", map[string]any{"source": map[string]any{"name": "x.txt", "content": "x.txt"}}); err == nil {
		t.Fatal("echo of a bare name succeeded")
	}
	calls := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		if s.SpanKind == trace.SpanKindClient && (s.Name == "a2a call nothing" || s.Name == "a2a call echo") {
			calls[s.SpanContext.SpanID()] = s
		}
	}
	var ran int
	for _, s := range spans.GetSpans() {
		if s.SpanKind != trace.SpanKindServer {
			continue
		}
		call, ok := calls[s.Parent.SpanID()]
		if !ok || !s.Parent.IsRemote() || s.SpanContext.TraceID() != call.SpanContext.TraceID() {
			continue
		}
		ran++
		if want := "a2a execute " + call.Name[len("a2a call "):]; s.Name != want {
			t.Errorf("agent's span %q, want %q", s.Name, want)
		}
		if s.Name == "a2a execute echo" && (s.Status.Description == "" || call.Status.Description == "") {
			t.Errorf("failed skill: agent's status %q, caller's %q; want both to say it failed", s.Status.Description, call.Status.Description)
		}
	}
	if len(calls) != 2 || ran != 2 {
		t.Fatalf("%d client spans, %d agent spans under them; want 2 and 2: %v", len(calls), ran, spans.GetSpans().Snapshots())
	}
}
