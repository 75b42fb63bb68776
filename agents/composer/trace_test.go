package composer

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// serveComposer is the agent in process with lim, served over HTTP until
// the test ends.
func serveComposer(t *testing.T, lim Limits) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = newServiceAt(t, lim, "http://"+srv.Listener.Addr().String()).Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// Where a compose call's time goes (issue 38): each compose_document over
// MCP exports a "render document" span, child of its tools/call span, with
// the format, the bytes written and a PDF's pages or a deck's slides; a
// rendering over the output limit is a span in error with the limit's
// words. No span holds the download URL's token or the file's name.
func TestRenderSpans(t *testing.T) {
	flush := otlptest.Export(t)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	markdown := "# Quarterly plan\n\nFirst part.\n\n---\n\n## Second\n\nMore words.\n"
	type result struct {
		IsError    bool `json:"isError"`
		Structured struct {
			DownloadURL string `json:"download_url"`
			SizeBytes   int64  `json:"size_bytes"`
		} `json:"structuredContent"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	call := func(srv *httptest.Server, parent, format string) result {
		return mcptest.Call[result](t, mcptest.NewSessionless(srv.URL+"/mcp"), "tools/call", map[string]any{
			"name":      "compose_document",
			"_meta":     map[string]any{"traceparent": "00-" + traceID + "-" + parent + "-01"},
			"arguments": map[string]any{"markdown": markdown, "format": format, "filename": "secret-merger"},
		})
	}
	srv := serveComposer(t, Limits{})
	parents := map[string]string{"pdf": "00f067aa0ba90201", "pptx": "00f067aa0ba90202", "html": "00f067aa0ba90203"}
	sizes := map[string]int64{}
	var tokens []string
	for format, parent := range parents {
		res := call(srv, parent, format)
		u, err := url.Parse(res.Structured.DownloadURL)
		if res.IsError || err != nil || u.Query().Get("token") == "" {
			t.Fatalf("compose %s: %+v, want a download URL with its token", format, res)
		}
		tokens = append(tokens, u.Query().Get("token"))
		sizes[format] = res.Structured.SizeBytes
	}
	tight := serveComposer(t, Limits{OutputBytes: 100})
	const refusedParent = "00f067aa0ba90204"
	if res := call(tight, refusedParent, "html"); !res.IsError {
		t.Fatalf("an HTML over a 100-byte output limit: %+v, want a tool error", res)
	}

	spans := flush()
	callSpans := map[string]otlptest.Span{} // by the caller's span id
	for _, s := range otlptest.Named(spans, "tools/call compose_document") {
		callSpans[otlptest.Hex(s.ParentSpanId)] = s
	}
	renders := otlptest.Named(spans, "render document")
	if len(renders) != 4 {
		t.Fatalf("%d render spans, want 4", len(renders))
	}
	for _, r := range renders {
		format := r.Attr("agentura.compose.format").GetStringValue()
		var parent string
		for p, s := range callSpans {
			if r.ChildOf(traceID, otlptest.Hex(s.SpanId)) {
				parent = p
			}
		}
		if r.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			if parent != refusedParent || format != "html" || !strings.Contains(r.Status.GetMessage(), "the rendered document exceeds 100 B") {
				t.Errorf("failed render span: parent %s, format %s, status %q", parent, format, r.Status.GetMessage())
			}
			continue
		}
		if parent != parents[format] {
			t.Errorf("render span of %s: under the call of %s, want that of %s", format, parent, parents[format])
		}
		if got := r.Attr("agentura.compose.bytes").GetIntValue(); got != sizes[format] {
			t.Errorf("render span of %s: %d bytes, the file has %d", format, got, sizes[format])
		}
		pages, slides := r.Attr("agentura.compose.pages").GetIntValue(), r.Attr("agentura.compose.slides").GetIntValue()
		switch {
		case format == "pdf" && pages < 1, format == "pptx" && slides != 3, format == "html" && (pages != 0 || slides != 0):
			t.Errorf("render span of %s: %d pages, %d slides", format, pages, slides)
		}
	}
	otlptest.Clean(t, spans, append(tokens, "secret-merger", "Quarterly")...)
}
