package agentcore

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"
)

// cancelOn is a log handler that calls cancel when msg is logged.
type cancelOn struct {
	slog.Handler
	msg    string
	cancel context.CancelFunc
}

func (h cancelOn) Enabled(context.Context, slog.Level) bool { return true }
func (h cancelOn) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.cancel()
	}
	return nil
}
func (h cancelOn) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h cancelOn) WithGroup(string) slog.Handler      { return h }

// TestServeStoppedAsItStarts: a stop (SIGTERM) that arrives as the
// service starts serving must end Serve, as it does with net/http alone.
func TestServeStoppedAsItStarts(t *testing.T) {
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		cfg := Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PublicURL: "http://agent.test", CleanupSchedule: "@every 1h"}
		svc, err := New(Info{Name: "t", Version: "0"}, cfg, slog.New(cancelOn{msg: "agent serving", cancel: cancel}))
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- svc.Serve(ctx, ln) }()
		select {
		case err := <-done:
			t.Logf("Serve returned %v", err)
		case <-time.After(5 * time.Second):
			t.Error("Serve still running 5 s after its context was cancelled")
			ln.Close()
			<-done
		}
	}
}
