package ocr_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
)

// newService returns a service with the OCR agent registered, on cfg,
// serving HTTP (for downloads) until the test ends.
func newService(t testing.TB, cfg ocr.Config) (*agentcore.Service, *httptest.Server) {
	t.Helper()
	ocrtest.Require(t, "tesseract", "pdftoppm", "pdfinfo")
	srv := httptest.NewUnstartedServer(nil)
	svc, err := agentcore.New(ocr.Info, agentcore.Config{
		DataDir:   t.TempDir(),
		PublicURL: "http://" + srv.Listener.Addr().String(),
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("new service: %v", err)
	}
	t.Cleanup(func() { svc.Close() })
	if err := ocr.New(cfg).Register(svc); err != nil {
		t.Fatalf("register: %v", err)
	}
	srv.Config.Handler = svc.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return svc, srv
}

// invoke calls tool with args as the anonymous owner.
func invoke(t testing.TB, svc *agentcore.Service, tool string, args any) (*agentcore.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatalf("encode arguments: %v", err)
	}
	return svc.Invoke(context.Background(), tool, "", raw)
}

// attachment is a file argument in the object form, content in base64.
func attachment(name string, data []byte) map[string]any {
	return map[string]any{"name": name, "content": base64.StdEncoding.EncodeToString(data)}
}

// zipOf returns a zip archive holding one file.
func zipOf(t testing.TB, name string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create(name)
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatalf("zip: %v", err)
	}
	return b.Bytes()
}
