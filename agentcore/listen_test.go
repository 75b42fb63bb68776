package agentcore

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// startMain does what Main does between parsing and serving: bind, build the
// service on the bound address, serve it over HTTP.
func startMain(t *testing.T, run mainRun, logger *slog.Logger) (*Service, string) {
	t.Helper()
	ln, err := run.listen(logger)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Info{Name: "t"}, run.cfg, logger)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	addEchoTool(svc)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return svc, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// downloadURLOf calls echo and returns the download URL it hands out.
func downloadURLOf(t *testing.T, svc *Service) string {
	t.Helper()
	res, err := svc.Invoke(context.Background(), "echo", "", json.RawMessage(`{"source": "data:text/plain;name=a.txt;base64,aGVsbG8="}`))
	if err != nil {
		t.Fatal(err)
	}
	return res.Files[0].DownloadURL
}

// TestPortZeroHandsOutTheBoundPort: AGENT_ADDR=127.0.0.1:0 used to hand
// out http://localhost:0/... URLs; they carry the bound port and download.
func TestPortZeroHandsOutTheBoundPort(t *testing.T) {
	cfg, err := ConfigFromLookup(env(map[string]string{"AGENT_ADDR": "127.0.0.1:0", "AGENT_DATA_DIR": t.TempDir()}), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	svc, port := startMain(t, mainRun{cfg: cfg}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	u := downloadURLOf(t, svc)
	if port == "0" || !strings.HasPrefix(u, "http://localhost:"+port+"/files/") {
		t.Fatalf("download URL %s; want it on the bound port %s", u, port)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello" {
		t.Errorf("GET %s: %d %q", u, resp.StatusCode, body)
	}
}

// TestStdioFallsBackToAFreePort: under --stdio a taken AGENT_ADDR no longer
// stops the agent: downloads go to a free loopback port, URLs say so, and
// the log names it. With AGENT_PUBLIC_URL given, it still fails.
func TestStdioFallsBackToAFreePort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	cfg, err := ConfigFromLookup(env(map[string]string{"AGENT_ADDR": addr, "AGENT_DATA_DIR": t.TempDir()}), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer // the serving goroutine logs while the test reads
	svc, port := startMain(t, mainRun{cfg: cfg, stdio: true}, slog.New(slog.NewTextHandler(&logs, nil)))
	if u := downloadURLOf(t, svc); !strings.HasPrefix(u, "http://localhost:"+port+"/files/") || strings.Contains(u, addr) {
		t.Errorf("download URL %s; want it on the fallback port %s", u, port)
	}
	if !strings.Contains(logs.String(), "free loopback port") || !strings.Contains(logs.String(), "127.0.0.1:"+port) {
		t.Errorf("the log does not say where downloads went:\n%s", logs.String())
	}

	cfg.PublicURL = "https://agent.example.com"
	run := mainRun{cfg: cfg, stdio: true, publicURLSet: true}
	if ln, err := run.listen(slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
		ln.Close()
		t.Error("a taken AGENT_ADDR with AGENT_PUBLIC_URL given was accepted; URLs would point at another server")
	}
	run = mainRun{cfg: cfg}
	if ln, err := run.listen(slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), "AGENT_ADDR") {
		if ln != nil {
			ln.Close()
		}
		t.Errorf("a taken AGENT_ADDR without --stdio: %v; want an error naming AGENT_ADDR", err)
	}
}

// TestPublicURLSetIsRemembered: parseMain tells a given AGENT_PUBLIC_URL
// from the derived one.
func TestPublicURLSetIsRemembered(t *testing.T) {
	for vars, want := range map[string]bool{"": false, "https://a.example.com": true} {
		run, err := parseMain(Info{Name: "t"}, "", nil, env(map[string]string{"AGENT_PUBLIC_URL": vars}), mainOptions{}, io.Discard)
		if err != nil || run.publicURLSet != want {
			t.Errorf("AGENT_PUBLIC_URL=%q: publicURLSet %v (%v), want %v", vars, run.publicURLSet, err, want)
		}
	}
}

// TestNewRefusesPortZeroURLs: a service built on its own with a public URL
// of port 0 would hand out URLs nobody can follow; New says what to do.
func TestNewRefusesPortZeroURLs(t *testing.T) {
	cfg, err := ConfigFromLookup(env(map[string]string{"AGENT_ADDR": "127.0.0.1:0", "AGENT_DATA_DIR": t.TempDir()}), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if svc, err := New(Info{Name: "t"}, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), "agentcore.Main") {
		if svc != nil {
			svc.Close()
		}
		t.Errorf("New with AGENT_PUBLIC_URL %s: %v; want a refusal naming agentcore.Main", cfg.PublicURL, err)
	}
}

// lockedBuffer is a bytes.Buffer that a logger may write while a test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
