package ocr_test

import (
	"encoding/base64"
	"net/url"
	"testing"

	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Where an OCR call's time goes (issue 38): a two-page PDF read over MCP
// exports a span per page, each the child of the tools/call span, with its
// page number, the page count and the languages; the tool call's download
// URL's token and the file's name are in no span.
func TestPageSpans(t *testing.T) {
	flush := otlptest.Export(t)
	_, srv := newService(t, ocr.Config{Concurrency: 2})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	pdf := ocrtest.PDF(t, []string{"First page words"}, []string{"Second page words"})
	caller := mcptest.NewSessionless(srv.URL + "/mcp")
	res := mcptest.Call[struct {
		IsError    bool `json:"isError"`
		Structured struct {
			Files []struct {
				DownloadURL string `json:"download_url"`
			} `json:"files"`
			DownloadURL string `json:"download_url"`
		} `json:"structuredContent"`
	}](t, caller, "tools/call", map[string]any{
		"name":  "ocr_document",
		"_meta": map[string]any{"traceparent": "00-" + traceID + "-" + parentID + "-01"},
		"arguments": map[string]any{
			"source":  map[string]any{"name": "secret-ledger.pdf", "content": base64.StdEncoding.EncodeToString(pdf)},
			"outputs": []string{"tsv"},
		},
	})
	if res.IsError {
		t.Fatalf("ocr_document: %+v", res)
	}
	link := res.Structured.DownloadURL
	if link == "" && len(res.Structured.Files) > 0 {
		link = res.Structured.Files[0].DownloadURL
	}
	u, err := url.Parse(link)
	token := u.Query().Get("token")
	if err != nil || token == "" {
		t.Fatalf("no download URL with a token in %+v", res)
	}

	spans := flush()
	calls := otlptest.Named(spans, "tools/call ocr_document")
	if len(calls) != 1 {
		t.Fatalf("%d tools/call ocr_document spans, want 1", len(calls))
	}
	call := calls[0]
	pages := otlptest.Named(spans, "ocr page")
	seen := map[int64]bool{}
	for _, p := range pages {
		if !p.ChildOf(traceID, otlptest.Hex(call.SpanId)) {
			t.Errorf("page span %v: not a child of the tool call's span %s", p.Attributes, otlptest.Hex(call.SpanId))
		}
		if p.Attr("agentura.ocr.page_count").GetIntValue() != 2 || p.Attr("agentura.ocr.pages_read").GetIntValue() != 1 ||
			p.Attr("agentura.ocr.languages").GetStringValue() != "eng" || p.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("page span: attributes %v, status %v", p.Attributes, p.Status)
		}
		if p.EndTimeUnixNano <= p.StartTimeUnixNano {
			t.Errorf("page span: no time between %d and %d", p.StartTimeUnixNano, p.EndTimeUnixNano)
		}
		seen[p.Attr("agentura.ocr.page").GetIntValue()] = true
	}
	if len(pages) != 2 || !seen[1] || !seen[2] {
		t.Errorf("page spans for pages %v, want one each for 1 and 2", seen)
	}
	otlptest.Clean(t, spans, token, "secret-ledger")
}
