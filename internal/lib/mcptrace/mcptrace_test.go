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
	if got := extract(ctx, &mcp.ServerRequest[*mcp.ListToolsParams]{}); got != ctx {
		t.Error("extract made up a trace for a request without params")
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	inject(trace.ContextWithSpanContext(ctx, sc), (*mcp.ListToolsParams)(nil)) // must not panic
	p := &mcp.ListToolsParams{}
	inject(trace.ContextWithSpanContext(ctx, sc), p)
	if got := p.GetMeta()["traceparent"]; got != "00-01000000000000000000000000000000-0200000000000000-01" {
		t.Errorf("traceparent written: %v", got)
	}
}

// A request's id is read wherever it stands among the members, as the
// conventions record it; a batch, a notification or a body cut before the
// id gives none.
func TestPeekID(t *testing.T) {
	long := strings.Repeat("x", 300)
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`:                                "7",
		`{"method":"tools/call","params":{"name":"a","arguments":{}},"jsonrpc":"2.0","id":"req-1"}`: "req-1",
		`{"jsonrpc":"2.0","ID":-3.5e2,"method":"ping"}`:                                             "-3.5e2",
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`:                                               "",
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:                                    "",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`:                                                "",
		`{"jsonrpc":"2.0","params":{"a":"cut here`:                                                  "",
		`{"id":"` + long + `"}`:                                                                     long[:maxIDBytes] + "…",
		`{"id":{"not":"an id"}}`:                                                                    "",
	} {
		if got := idText(peekID([]byte(body))); got != want {
			t.Errorf("peekID(%.60s) = %q, want %q", body, got, want)
		}
	}
}

// File names reach a span only when allowed, cleaned of folders and
// control characters.
func TestFileName(t *testing.T) {
	t.Cleanup(func() { SetFileNames(false) })
	SetFileNames(false)
	if kv, ok := FileName("plan.pdf"); ok {
		t.Errorf("names off: FileName gave %v", kv)
	}
	if kv, ok := FileNamesAttr("a.pdf", "b.pdf"); ok {
		t.Errorf("names off: FileNamesAttr gave %v", kv)
	}
	SetFileNames(true)
	if kv, ok := FileName("../../etc/Q3\u202e.pdf"); !ok || kv.Key != AttrFileName || kv.Value.AsString() != "Q3.pdf" {
		t.Errorf("names on: FileName = %v, %v; want agentura.file.name Q3.pdf", kv, ok)
	}
	if _, ok := FileName("../"); ok {
		t.Error("names on: a name that cleans to nothing was recorded")
	}
	if kv, ok := FileNamesAttr("x/a.pdf", "", "b.txt"); !ok || strings.Join(kv.Value.AsStringSlice(), ",") != "a.pdf,b.txt" {
		t.Errorf("names on: FileNamesAttr = %v, %v", kv, ok)
	}
}
