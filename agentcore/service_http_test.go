package agentcore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/transfer"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoInput struct {
	Source FileAttachment `json:"source"`
}

// addEchoTool registers "echo", which hands the resolved input back out.
func addEchoTool(svc *Service) {
	AddTool(svc, Tool{Name: "echo", Description: "returns the file it gets"}, func(ctx context.Context, call *Call, in echoInput) (*Result, error) {
		f, err := call.ResolveFileAttachment(ctx, in.Source)
		if err != nil {
			return nil, err
		}
		res, err := call.FileResponse(ctx, OutputFile(f.Name, f.Path))
		if err != nil {
			return nil, err
		}
		res.Data = map[string]any{"owner": call.Owner}
		return res, nil
	})
}

func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func TestHealthReadinessMetrics(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	addEchoTool(svc)
	if code, _ := getJSON(t, srv.URL+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	code, body := getJSON(t, srv.URL+"/readyz")
	if code != 200 || body["status"] != "ready" {
		t.Errorf("/readyz = %d %v", code, body)
	}
	svc.AddReadinessCheck("tesseract", func(context.Context) error {
		return errors.New("tesseract not found on PATH; install the tesseract-ocr package")
	})
	code, body = getJSON(t, srv.URL+"/readyz")
	checks, _ := body["checks"].(map[string]any)
	if code != 503 || !strings.Contains(checks["tesseract"].(string), "install the tesseract-ocr package") {
		t.Errorf("/readyz with a failing check = %d %v", code, body)
	}

	res, err := svc.Invoke(context.Background(), "echo", "", json.RawMessage(`{"source": {"name": "a.txt", "content": "data:,hello"}}`))
	if err != nil {
		t.Fatal(err)
	}
	download(t, res.Files[0].DownloadURL)
	download(t, res.Files[0].DownloadURL+"x") // a bad token
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`agentura_tool_calls_total{outcome="ok",tool="echo"} 1`,
		`agentura_files_stored_total{area="outputs"} 1`,
		`agentura_downloads_total{status="200"} 1`,
		`agentura_downloads_total{status="403"} 1`,
		`agentura_download_bytes_total 5`,
		`agentura_sweeps_total`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("/metrics lacks %q in:\n%s", want, text)
		}
	}
}

func TestConfigErrorsNameTheVariable(t *testing.T) {
	cases := map[string]string{
		"AGENT_URL_TTL":          "forever",
		"AGENT_OUTPUT_TTL":       "-1h",
		"AGENT_MAX_UPLOAD_BYTES": "50MB",
		"AGENT_CLEANUP_SCHEDULE": "every now and then",
		"AGENT_PUBLIC_URL":       "agent.example.com",
		"AGENT_AUTH":             "basic",
		"AGENT_MCP_STATELESS":    "sometimes",
		"AGENT_INPUT_ROOTS":      "/no/such/folder",
		"AGENT_STORAGE_URL":      "ftp://x",
		"AGENT_ADDR":             "8001",
		"AGENT_LOG_LEVEL":        "chatty",
	}
	for name, value := range cases {
		env := map[string]string{name: value}
		_, err := ConfigFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "x", ":8001")
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Var != name || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: err = %v, want a ConfigError naming %s", name, value, err, name)
		}
	}
	cfg, err := ConfigFromLookup(func(string) (string, bool) { return "", false }, "ocr-agent", ":8001")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PublicURL != "http://localhost:8001" || cfg.DataDir != filepath.Join("data", "ocr-agent") ||
		cfg.MaxUploadBytes != 50<<20 || cfg.EmbedMaxBytes != 65536 || cfg.URLTTL != time.Hour ||
		cfg.OutputTTL != 24*time.Hour || cfg.StagingTTL != time.Hour || cfg.CleanupSchedule != "@every 10m" || cfg.Auth != "none" {
		t.Errorf("defaults = %+v", cfg)
	}
}

func TestCallFolderRemovedHoweverTheCallEnds(t *testing.T) {
	svc := newTestService(t, nil)
	var dirs []string
	AddTool(svc, Tool{Name: "work"}, func(ctx context.Context, call *Call, in echoInput) (*Result, error) {
		if _, err := call.ResolveFileAttachment(ctx, in.Source); err != nil {
			return nil, err
		}
		dir, _ := call.WorkDir()
		os.WriteFile(filepath.Join(dir, "scratch"), []byte("x"), 0o600)
		dirs = append(dirs, call.dir)
		switch in.Source.Name {
		case "fail":
			return nil, errors.New("failed on purpose")
		case "panic":
			panic("panicked on purpose")
		}
		return TextResult("ok"), nil
	})
	for _, name := range []string{"ok", "fail", "panic"} {
		_, err := svc.Invoke(context.Background(), "work", "", json.RawMessage(`{"source": {"name": "`+name+`", "content": "data:,x"}}`))
		if name == "panic" && (err == nil || !strings.Contains(err.Error(), "internal error")) {
			t.Errorf("panic: err = %v", err)
		}
	}
	if len(dirs) != 3 {
		t.Fatalf("ran %d calls", len(dirs))
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("call folder %s survived its call", d)
		}
	}
	if _, err := svc.Invoke(context.Background(), "nope", "", nil); !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), "[work]") {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestSignedURLOutlivesRestart(t *testing.T) {
	dataDir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	start := func(ln net.Listener) (*Service, context.CancelFunc, chan error) {
		svc := newTestService(t, func(c *Config) { c.DataDir = dataDir; c.PublicURL = "http://" + addr })
		addEchoTool(svc)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- svc.Serve(ctx, ln) }()
		return svc, cancel, done
	}
	svc, stop, done := start(ln)
	res, err := svc.Invoke(context.Background(), "echo", "", json.RawMessage(`{"source": "data:text/plain;name=a.txt,kept"}`))
	if err != nil {
		t.Fatal(err)
	}
	url := res.Files[0].DownloadURL
	if _, body := download(t, url); string(body) != "kept" {
		t.Fatalf("before restart: %q", body)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "signing.key")); err != nil {
		t.Fatalf("no key file kept: %v", err)
	}
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, stop2, done2 := start(ln2)
	defer func() { stop2(); <-done2 }()
	if resp, body := download(t, url); resp.StatusCode != 200 || string(body) != "kept" {
		t.Errorf("after restart: %s %q", resp.Status, body)
	}
}

func TestShutdownLetsDownloadsFinish(t *testing.T) {
	dataDir := t.TempDir()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	svc := newTestService(t, func(c *Config) { c.DataDir = dataDir; c.PublicURL = "http://" + ln.Addr().String() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, ln) }()

	big := make([]byte, 32<<20)
	rand.Read(big)
	call := svc.newCall("t", AnonymousOwner, "")
	res, err := call.FileResponse(context.Background(), OutputBytes("big.bin", big))
	call.end()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(res.Files[0].DownloadURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 1<<20)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	cancel() // SIGTERM arrives mid-download
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("download cut by shutdown: %v", err)
	}
	if !bytes.Equal(append(first, rest...), big) {
		t.Error("download differs")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("shutdown did not finish")
	}
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func callerToken(t *testing.T, secret, sub string) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Subject: sub, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour)),
	}).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func connect(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	return connectAt(t, url, token, "")
}

// connectAt is connect asking for an MCP revision: "" for the newest both
// ends speak (the go-sdk's default).
func connectAt(t *testing.T, url, token, revision string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func upload(t testing.TB, url, token, name string, body []byte) (int, transfer.Upload, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/uploads", bytes.NewReader(body))
	req.Header.Set("X-Filename", name)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var u transfer.Upload
	json.Unmarshal(raw, &u)
	return resp.StatusCode, u, string(raw)
}

func TestAuthJWTOwnersAndStagedUploads(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef-test"
	svc, srv := serveTestService(t, func(c *Config) { c.Auth = "jwt"; c.AuthJWTSecret = secret })
	addEchoTool(svc)
	alice, bob := callerToken(t, secret, "alice"), callerToken(t, secret, "bob")

	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp without a token = %d, want 401", resp.StatusCode)
	}
	if code, _, _ := upload(t, srv.URL, "", "x.txt", []byte("x")); code != http.StatusUnauthorized {
		t.Errorf("/uploads without a token = %d, want 401", code)
	}
	forged := callerToken(t, "another-secret-another-secret-1234", "alice")
	if code, _, _ := upload(t, srv.URL, forged, "x.txt", []byte("x")); code != http.StatusUnauthorized {
		t.Errorf("/uploads with a forged token = %d, want 401", code)
	}

	payload := bytes.Repeat([]byte("staged "), 600_000) // 4.2 MB, staged rather than inline
	code, staged, raw := upload(t, srv.URL, alice, "big.txt", payload)
	if code != http.StatusCreated {
		t.Fatalf("upload = %d %s", code, raw)
	}
	args := map[string]any{"source": map[string]any{"name": "big.txt", "content": staged.URL}}

	res, err := connect(t, srv.URL, alice).CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("alice's call failed: %v", res.Content[0].(*mcp.TextContent).Text)
	}
	st := res.StructuredContent.(map[string]any)
	if st["owner"] != "alice" {
		t.Errorf("owner = %v, want alice (from the token's sub)", st["owner"])
	}
	if _, body := download(t, st["download_url"].(string)); !bytes.Equal(body, payload) {
		t.Error("echoed staged upload differs")
	}

	res, err = connect(t, srv.URL, bob).CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "another") {
		t.Errorf("bob used alice's staged upload: %+v", res.Content)
	}
}

func TestInlineInputAboveDefaultBodyCap(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	addEchoTool(svc)
	data := make([]byte, 6<<20)
	rand.Read(data)
	args := map[string]any{"source": map[string]any{"name": "r.bin", "content": "data:application/octet-stream;base64," + b64(data)}}
	res, err := connect(t, srv.URL, "").CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("call failed: %v", res.Content[0].(*mcp.TextContent).Text)
	}
	if _, body := download(t, res.StructuredContent.(map[string]any)["download_url"].(string)); !bytes.Equal(body, data) {
		t.Error("6 MiB inline input came back different")
	}
}

func TestStatelessMCP(t *testing.T) {
	svc, srv := serveTestService(t, func(c *Config) { c.MCPStateless = true })
	addEchoTool(svc)
	cs := connect(t, srv.URL, "")
	for i := 0; i < 2; i++ { // every request stands alone: no session to stick to
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo",
			Arguments: map[string]any{"source": "data:text/plain;name=n.txt,hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("stateless call failed: %v", res.Content[0].(*mcp.TextContent).Text)
		}
	}
	resp, err := http.Get(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /mcp on a stateless server = %d, want 405", resp.StatusCode)
	}
}

func TestShutdownLetsToolCallsFinish(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	url := "http://" + ln.Addr().String()
	svc := newTestService(t, func(c *Config) { c.PublicURL = url })
	started, release := make(chan struct{}), make(chan struct{})
	AddTool(svc, Tool{Name: "slow"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		close(started)
		<-release
		return TextResult("finished"), nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, ln) }()

	cs := connect(t, url, "")
	got := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		if err != nil {
			t.Errorf("call cut by shutdown: %v", err)
		}
		got <- res
	}()
	<-started
	cancel() // SIGTERM while the tool runs
	time.Sleep(50 * time.Millisecond)
	close(release)
	if res := <-got; res == nil || res.Content[0].(*mcp.TextContent).Text != "finished" {
		t.Errorf("result = %+v", res)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestEmbedZeroMeansNever(t *testing.T) {
	svc, _ := serveTestService(t, func(c *Config) { c.EmbedMaxBytes = -1 }) // AGENT_EMBED_MAX_BYTES=0: never
	call := svc.newCall("t", "alice", "")
	defer call.end()
	res, err := call.FileResponse(context.Background(), OutputBytes("tiny.txt", []byte("x")))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range svc.mcp.Render(context.Background(), res.outcome()).Content {
		if _, ok := c.(*mcp.EmbeddedResource); ok {
			t.Error("embedded although AGENT_EMBED_MAX_BYTES is 0")
		}
	}
}
