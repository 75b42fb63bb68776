package ocr

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	"go.opentelemetry.io/otel"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// A page tesseract fails on (here, its image is gone) has a span in error
// with the reason its caller reads, tesseract's own words, but not the
// input's path, which holds the file's name.
func TestPageSpanRecordsTesseractFailure(t *testing.T) {
	ocrtest.Require(t, "tesseract")
	flush := otlptest.Export(t)
	a := New(Config{})
	dir := t.TempDir()
	input := filepath.Join(dir, "in-1", "secret-payroll.png") // never written
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctx, parent := otel.Tracer("test").Start(ctx, "tools/call ocr_document")
	src := &source{InputFile: &agentcore.InputFile{Name: "secret-payroll.png", Path: input}, Kind: kindImage, Pages: 1}
	_, err := a.recognize(ctx, src, request{Languages: []string{DefaultLanguage}}, work)
	parent.End()
	if err == nil || !strings.Contains(err.Error(), "tesseract failed") {
		t.Fatalf("recognize a missing image: %v, want tesseract's failure", err)
	}

	spans := flush()
	pages := otlptest.Named(spans, "ocr page")
	if len(pages) != 1 {
		t.Fatalf("%d page spans, want 1", len(pages))
	}
	p := pages[0]
	if !p.ChildOf(parent.SpanContext().TraceID().String(), parent.SpanContext().SpanID().String()) {
		t.Errorf("page span not a child of the call's")
	}
	msg := p.Status.GetMessage()
	if p.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || !strings.Contains(msg, "tesseract failed: exit status 1") || !strings.Contains(msg, "cannot read input file") {
		t.Errorf("page span status %v %q, want tesseract's failure in its words", p.Status.GetCode(), msg)
	}
	if p.Attr("agentura.ocr.page").GetIntValue() != 1 || p.Attr("agentura.ocr.page_count").GetIntValue() != 1 {
		t.Errorf("page span attributes %v", p.Attributes)
	}
	otlptest.Clean(t, spans, "secret-payroll", dir)
}
