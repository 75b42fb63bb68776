package agentcore

import (
	"encoding/base64"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentura/agentura/fileserve"
)

// newTestService builds a service on a fresh data folder; edit adjusts the
// configuration first.
func newTestService(t testing.TB, edit func(*Config)) *Service {
	t.Helper()
	cfg := Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PublicURL: "http://agent.test", CleanupSchedule: "@every 1h"}
	if edit != nil {
		edit(&cfg)
	}
	svc, err := New(Info{Name: "test-agent", Version: "0"}, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

// serveTestService serves svc on a loopback httptest server and sets its
// public URL to that server's address.
func serveTestService(t testing.TB, edit func(*Config)) (*Service, *httptest.Server) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	url := "http://" + srv.Listener.Addr().String()
	svc := newTestService(t, func(c *Config) {
		c.PublicURL = url
		if edit != nil {
			edit(c)
		}
	})
	srv.Config.Handler = svc.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return svc, srv
}

// filesIn lists the regular files below dir.
func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// backing is the store at the bottom of svc's chain of wrappers, whose
// files include those past their time to live.
func backing(svc *Service) fileserve.Store {
	st := svc.store
	for {
		w, ok := st.(fileserve.Wrapper)
		if !ok {
			return st
		}
		st = w.Unwrap()
	}
}
