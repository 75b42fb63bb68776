package mcptrace

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// Scrub keeps the reason and drops what a span must not hold: names and
// contents in quotes, URL queries (signed URLs' tokens), user information;
// and, unless file names are allowed, URL paths and paths, which name files.
func TestScrub(t *testing.T) {
	for _, c := range []struct{ in, off, on string }{
		{`file "secret.pdf": unresolved file reference`, `file "…": unresolved file reference`, `file "…": unresolved file reference`},
		{`fetch https://agent/files/1/a.pdf?token=eyJabc failed`, `fetch https://agent/… failed`, `fetch https://agent/files/1/a.pdf?… failed`},
		{`read https://user:pw@host/x: 403`, `read https://REDACTED@host/…: 403`, `read https://REDACTED@host/x: 403`},
		{`bad token=abc.def in the query`, `bad token=… in the query`, `bad token=… in the query`},
		{`an unpaired "quote and the rest`, `an unpaired "…"`, `an unpaired "…"`},
		{`open /data/calls/in-1/plan.txt: file exists`, `open /…: file exists`, `open /data/calls/in-1/plan.txt: file exists`},
		{`a data URI (data:text/plain;base64,<data>) or a path`, `a data URI (data:text/plain;base64,<data>) or a path`, `a data URI (data:text/plain;base64,<data>) or a path`},
		{`no secrets here`, `no secrets here`, `no secrets here`},
	} {
		SetFileNames(false)
		if got := Scrub(c.in); got != c.off {
			t.Errorf("names off: Scrub(%q) = %q, want %q", c.in, got, c.off)
		}
		SetFileNames(true)
		if got := Scrub(c.in); got != c.on {
			t.Errorf("names on: Scrub(%q) = %q, want %q", c.in, got, c.on)
		}
	}
	SetFileNames(false)
	long := strings.Repeat("é", maxStatus)
	if got := Scrub(long); len(got) > maxStatus+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("Scrub of %d bytes: %d bytes", len(long), len(got))
	}
}

// The carrier reads and writes string members of _meta only.
func TestMetaCarrier(t *testing.T) {
	m := MetaCarrier{"traceparent": "00-x", "n": 3}
	if m.Get("traceparent") != "00-x" || m.Get("n") != "" || m.Get("absent") != "" {
		t.Errorf("Get: %v", m)
	}
	m.Set("baggage", "k=v")
	if m["baggage"] != "k=v" || len(m.Keys()) != 3 {
		t.Errorf("Set/Keys: %v", m)
	}
}

// The go-sdk hands a request without params (tools/list) as a nil pointer
// of its params type: neither side may touch it.
func TestNilParams(t *testing.T) {
	ctx := context.Background()
	if got := Extract(ctx, &mcp.ServerRequest[*mcp.ListToolsParams]{}); got != ctx {
		t.Error("Extract made up a trace for a request without params")
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	Inject(trace.ContextWithSpanContext(ctx, sc), (*mcp.ListToolsParams)(nil)) // must not panic
	p := &mcp.ListToolsParams{}
	Inject(trace.ContextWithSpanContext(ctx, sc), p)
	if got := p.GetMeta()["traceparent"]; got != "00-01000000000000000000000000000000-0200000000000000-01" {
		t.Errorf("traceparent written: %v", got)
	}
}
