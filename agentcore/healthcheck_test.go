package agentcore

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/agentura/agentura/agentcore/internal/ops"
)

func TestHealthcheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svc := newTestService(t, nil)
	srv := &http.Server{Handler: svc.Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ctx := context.Background()

	if err := ops.Healthcheck(ctx, ":"+port); err != nil {
		t.Errorf("ready agent on :%s: %v", port, err)
	}
	if err := ops.Healthcheck(ctx, "0.0.0.0:"+port); err != nil {
		t.Errorf("ready agent on 0.0.0.0:%s: %v", port, err)
	}
	// What a Docker HEALTHCHECK runs: the agent binary with --healthcheck.
	if code := Main(Info{Name: "t"}, ":1", []string{"--healthcheck", "--addr", ":" + port, "--data-dir", t.TempDir()}, nil); code != 0 {
		t.Errorf("Main --healthcheck on a ready agent exited %d", code)
	}

	svc.AddReadinessCheck("tesseract", func(context.Context) error { return errExample("tesseract not found; install tesseract-ocr") })
	if err := ops.Healthcheck(ctx, ":"+port); err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "install tesseract-ocr") {
		t.Errorf("not ready agent: err = %v, want 503 with the failing check", err)
	}

	srv.Close()
	if err := ops.Healthcheck(ctx, ":"+port); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("stopped agent: err = %v", err)
	}
	if code := Main(Info{Name: "t"}, ":1", []string{"--healthcheck", "--addr", ":" + port, "--data-dir", t.TempDir()}, nil); code != 1 {
		t.Errorf("Main --healthcheck on a stopped agent exited %d, want 1", code)
	}
	if err := ops.Healthcheck(ctx, "8001"); err == nil || !strings.Contains(err.Error(), "AGENT_ADDR") {
		t.Errorf("bad address: err = %v", err)
	}
}

type errExample string

func (e errExample) Error() string { return string(e) }
