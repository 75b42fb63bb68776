package client_test

// Tests of the middleware against a real agent: agentcore serving the
// example agent's tools and a few host-side test tools over streamable HTTP
// on a loopback port (internal/testkit/testagent), driven by the go-sdk client.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/testagent"
	"github.com/agentura/agentura/transfer"
)

const callTimeout = 2 * time.Minute

// session is a go-sdk client session with the middleware attached.
type session struct {
	cs        *mcp.ClientSession
	mw        *client.Middleware
	reg       *client.Registry
	mu        sync.Mutex
	progress  []client.Progress
	fileGets  atomic.Int64 // GET /files/ requests the middleware made
	uploadsOK atomic.Int64 // POST /uploads requests
	tusPatch  atomic.Int64 // PATCH /uploads/tus/<id> requests
}

type sessionOptions struct {
	token   string
	tune    func(*client.Config)
	noToken bool // send no token over MCP either
}

// countingTransport counts the middleware's HTTP requests by kind.
type countingTransport struct{ s *session }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch {
	case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/files/"):
		c.s.fileGets.Add(1)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/uploads"):
		c.s.uploadsOK.Add(1)
	case r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/uploads/tus/"):
		c.s.tusPatch.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// bearer adds a token to every MCP request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, a *testagent.Agent, o sessionOptions) *session {
	t.Helper()
	reg, err := client.NewRegistry("", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	s := &session{reg: reg}
	cfg := client.Config{
		Registry:   reg,
		BaseURL:    a.Base,
		Token:      o.token,
		HTTPClient: &http.Client{Transport: countingTransport{s}},
		Progress: func(p client.Progress) {
			s.mu.Lock()
			s.progress = append(s.progress, p)
			s.mu.Unlock()
		},
	}
	if o.tune != nil {
		o.tune(&cfg)
	}
	s.mw, err = client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "client-test", Version: "0"}, nil)
	s.mw.Attach(c)
	tr := &mcp.StreamableClientTransport{Endpoint: a.Endpoint} // as a host would: standalone SSE stream on
	if o.token != "" && !o.noToken {
		tr.HTTPClient = &http.Client{Transport: bearer{o.token}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	s.cs, err = c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", a.Endpoint, err)
	}
	t.Cleanup(func() { s.cs.Close() })
	return s
}

func (s *session) attach(t *testing.T, name string, data []byte) client.Entry {
	t.Helper()
	e, err := s.reg.Add(context.Background(), name, bytes.NewReader(data), client.SourceUpload)
	if err != nil {
		t.Fatalf("attach %s: %v", name, err)
	}
	return e
}

func (s *session) call(t *testing.T, tool, args string) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
}

func (s *session) mustCall(t *testing.T, tool, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := s.call(t, tool, args)
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, args, err)
	}
	if res.IsError {
		t.Fatalf("%s(%s) is a tool error: %s", tool, args, modelText(res))
	}
	return res
}

func (s *session) uploadProgress() (n int, last client.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.progress {
		if p.Direction == client.Upload {
			n++
			last = p
		}
	}
	return n, last
}

// modelText is every text block of a result, which is what a model reads.
func modelText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// assertModelView checks that the model sees no URL, no resource link and
// no embedded bytes, and that the structured content holds no download_url.
func assertModelView(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	for _, c := range res.Content {
		switch c.(type) {
		case *mcp.ResourceLink, *mcp.EmbeddedResource:
			t.Errorf("the model would see a %T", c)
		}
	}
	if txt := modelText(res); strings.Contains(txt, "http://") || strings.Contains(txt, "token=") {
		t.Errorf("the model's text holds a URL:\n%s", txt)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if strings.Contains(string(b), "download_url") || strings.Contains(string(b), "http://") {
		t.Errorf("structured content holds a URL: %s", b)
	}
}

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func pngOf(t *testing.T, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha(b)
}

func TestSmallInputGoesInline(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	s := connect(t, a, sessionOptions{})
	data := randomBytes(t, 1024)
	s.attach(t, "notes.bin", data)

	res := s.mustCall(t, "inspect_file", `{"source": "notes.bin"}`)
	if !strings.Contains(modelText(res), sha(data)) {
		t.Errorf("the agent did not get the file's bytes: want sha256 %s in %q", sha(data), modelText(res))
	}
	sc := res.StructuredContent.(map[string]any)
	if sc["name"] != "notes.bin" || sc["size_bytes"] != float64(1024) {
		t.Errorf("the agent saw name %v size %v, want notes.bin 1024", sc["name"], sc["size_bytes"])
	}
	if n := s.uploadsOK.Load(); n != 0 {
		t.Errorf("a 1 KiB file went through /uploads (%d requests); it should go inline", n)
	}
	// A name with spaces and non-ASCII letters arrives as it was.
	s.attach(t, "Bericht März 2026.txt", []byte("Umsatz\n"))
	res = s.mustCall(t, "inspect_file", `{"source": "Bericht März 2026.txt"}`)
	if got := res.StructuredContent.(map[string]any)["name"]; got != "Bericht März 2026.txt" {
		t.Errorf("the agent saw the name %q", got)
	}
	// The object form a model writes per the spec: name and content both the registry name.
	res = s.mustCall(t, "inspect_file", `{"source": {"name": "notes.bin", "content": "notes.bin"}}`)
	if !strings.Contains(modelText(res), sha(data)) {
		t.Errorf("object form: want sha256 %s in %q", sha(data), modelText(res))
	}
}

func TestLargeInputGoesThroughUploads(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	s := connect(t, a, sessionOptions{})
	data := randomBytes(t, 30<<20)
	s.attach(t, "scan.bin", data)

	res := s.mustCall(t, "inspect_file", `{"source": "scan.bin"}`)
	if !strings.Contains(modelText(res), sha(data)) {
		t.Errorf("the agent did not get the 30 MiB file intact: want sha256 %s in %q", sha(data), modelText(res))
	}
	// The agent publishes a URI string (SEP-2631 §5), so the signed URL goes
	// alone, without the object around it: its path carries the name.
	if got := res.StructuredContent.(map[string]any)["name"]; got != "scan.bin" {
		t.Errorf("the agent saw the name %q, want scan.bin", got)
	}
	if n := s.uploadsOK.Load(); n != 1 {
		t.Errorf("POST /uploads made %d times, want 1", n)
	}
	n, last := s.uploadProgress()
	if n < 2 || last.Done != 30<<20 || last.Total != 30<<20 || last.Name != "scan.bin" {
		t.Errorf("upload progress: %d reports, last %+v; want several, ending at 30 MiB of scan.bin", n, last)
	}
}

func TestInputAboveTusThresholdIsResumable(t *testing.T) {
	secret := strings.Repeat("s3cret-", 6)
	a := testagent.Start(t, testagent.Options{JWTSecret: secret})
	tok := mcptest.BearerToken(t, secret, "alice")
	s := connect(t, a, sessionOptions{token: tok, tune: func(c *client.Config) { c.TusMinBytes = 12 << 20 }})
	data := randomBytes(t, 40<<20)
	s.attach(t, "scan.bin", data)
	res := s.mustCall(t, "inspect_file", `{"source": "scan.bin"}`)
	if !strings.Contains(modelText(res), sha(data)) {
		t.Errorf("the agent did not get the 40 MiB file intact: want sha256 %s in %q", sha(data), modelText(res))
	}
	if got := res.StructuredContent.(map[string]any)["name"]; got != "scan.bin" {
		t.Errorf("the agent saw the name %q, want scan.bin", got)
	}
	if s.uploadsOK.Load() != 0 || s.tusPatch.Load() != 3 {
		t.Errorf("POST /uploads %d times, tus PATCH %d times; want 0 and 3 (16 MiB chunks)", s.uploadsOK.Load(), s.tusPatch.Load())
	}
	n, last := s.uploadProgress()
	if n < 3 || last.Done != 40<<20 || last.Total != 40<<20 || last.Name != "scan.bin" {
		t.Errorf("upload progress: %d reports, last %+v", n, last)
	}
}

func TestNestedEmbedsAndMultiFileOutput(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	s := connect(t, a, sessionOptions{})
	chart := pngOf(t, 40, 30, color.RGBA{200, 30, 30, 255})
	photo := pngOf(t, 20, 20, color.RGBA{30, 30, 200, 255})
	s.attach(t, "chart.png", chart)
	s.attach(t, "photo.png", photo)

	// Item with empty content: the name is the reference; item with content naming a registry file.
	res := s.mustCall(t, "compose_page",
		`{"markdown": "# Report", "embeds": [{"name": "chart.png", "description": "the chart"}, {"name": "picture.png", "content": "photo.png"}]}`)
	assertModelView(t, res)
	want := []string{"page.md", "images/chart.png", "images/picture.png"}
	if got := client.ProducedNames(res); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("produced %v, want %v", got, want)
	}
	for name, wantSHA := range map[string]string{"images/chart.png": sha(chart), "images/picture.png": sha(photo)} {
		e, err := s.reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if e.SHA256 != wantSHA || fileSHA(t, e.Path) != wantSHA {
			t.Errorf("%s: registry holds sha256 %s, want %s", name, e.SHA256, wantSHA)
		}
		if e.Source != "tool:compose_page" || e.MIMEType != "image/png" {
			t.Errorf("%s: source %q type %q", name, e.Source, e.MIMEType)
		}
		if e.Path != filepath.Join(s.reg.Dir(), "images", filepath.Base(name)) {
			t.Errorf("%s lies at %s, want under the images folder of %s", name, e.Path, s.reg.Dir())
		}
	}
	text := modelText(res)
	for _, line := range []string{
		"Composed a page with 2 image(s).",
		transfer.ProducedPrefix + "page.md (Markdown, ",
		transfer.ProducedPrefix + "images/chart.png (PNG image, ",
		transfer.ProducedPrefix + "images/picture.png (PNG image, ",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("model view lacks %q:\n%s", line, text)
		}
	}
	files := res.StructuredContent.(map[string]any)["files"].([]any)
	if f := files[1].(map[string]any); f["filename"] != "images/chart.png" || f["mime_type"] != "image/png" {
		t.Errorf("structured file 2 = %v", f)
	}

	// A plain string for the list becomes one item; a second page gets distinct names.
	res = s.mustCall(t, "compose_page", `{"markdown": "# Again", "embeds": "chart.png"}`)
	want = []string{"page (2).md", "images/chart (2).png"}
	if got := client.ProducedNames(res); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("second call produced %v, want %v (no overwrite)", got, want)
	}
	page, _ := s.reg.Lookup("page.md")
	if b, _ := os.ReadFile(page.Path); !strings.Contains(string(b), "# Report") {
		t.Errorf("the first page was overwritten: %q", b)
	}
}

func TestArchiveOutputsWithSubfolder(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	s := connect(t, a, sessionOptions{})
	s.attach(t, "a.txt", []byte("alpha\n"))
	s.attach(t, "b.txt", []byte("beta\n"))
	res := s.mustCall(t, "archive_files", `{"sources": ["a.txt", {"name": "b.txt", "content": ""}], "name": "demo"}`)
	assertModelView(t, res)
	if got := client.ProducedNames(res); strings.Join(got, ",") != "demo.zip,demo/SHA256SUMS" {
		t.Fatalf("produced %v", got)
	}
	sums, err := s.reg.Lookup("demo/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(sums.Path)
	if !strings.Contains(string(b), sha([]byte("alpha\n"))+"  a.txt") || !strings.Contains(string(b), sha([]byte("beta\n"))+"  b.txt") {
		t.Errorf("SHA256SUMS = %q", b)
	}
	if s.fileGets.Load() != 2 {
		t.Errorf("%d downloads, want 2 (nothing embedded)", s.fileGets.Load())
	}
}

func TestEmbeddedResourcesRegisteredWithoutDownload(t *testing.T) {
	a := testagent.Start(t, testagent.Options{EmbedMaxBytes: 64 << 10})
	s := connect(t, a, sessionOptions{})
	s.attach(t, "a.txt", []byte("alpha\n"))
	res := s.mustCall(t, "archive_files", `{"sources": "a.txt", "name": "small"}`)
	assertModelView(t, res)
	if got := client.ProducedNames(res); strings.Join(got, ",") != "small.zip,small/SHA256SUMS" {
		t.Fatalf("produced %v", got)
	}
	if n := s.fileGets.Load(); n != 0 {
		t.Errorf("%d downloads; embedded files should be registered from the result", n)
	}
	e, _ := s.reg.Lookup("small.zip")
	if e.MIMEType != "application/zip" || e.Size == 0 {
		t.Errorf("small.zip: %+v", e)
	}
}

func TestMissingNameIsNotSent(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	s := connect(t, a, sessionOptions{})
	s.attach(t, "invoice.pdf", []byte("%PDF-1.4 tiny"))
	s.attach(t, "scan.png", pngOf(t, 2, 2, color.White))

	_, err := s.call(t, "inspect_file", `{"source": "invoce.pdf"}`)
	if err == nil {
		t.Fatal("a name not in the registry was sent")
	}
	if !errors.Is(err, client.ErrNotFound) {
		t.Errorf("error %v does not wrap ErrNotFound", err)
	}
	for _, want := range []string{`"invoce.pdf"`, "invoice.pdf, scan.png", "not sent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// Nested: the item names a file that is not there.
	if _, err := s.call(t, "compose_page", `{"markdown": "x", "embeds": [{"name": "chart.png"}]}`); err == nil ||
		!strings.Contains(err.Error(), "embeds[0].content") {
		t.Errorf("nested missing name: %v", err)
	}
	if calls := a.Metric(t, `agentura_tool_calls_total{outcome="ok",tool="inspect_file"}`) +
		a.Metric(t, `agentura_tool_calls_total{outcome="error",tool="inspect_file"}`); calls != "" {
		t.Errorf("the agent saw a call: %s", calls)
	}
	// The same series counts a call that is sent.
	s.mustCall(t, "inspect_file", `{"source": "invoice.pdf"}`)
	if calls := a.Metric(t, `agentura_tool_calls_total{outcome="ok",tool="inspect_file"}`); !strings.HasSuffix(calls, " 1") {
		t.Errorf("after one call sent: %q", calls)
	}
}

func TestOverCapDownloadIsRefusedAndLeavesNothing(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	s := connect(t, a, sessionOptions{tune: func(c *client.Config) { c.MaxDownloadBytes = 1 << 20 }})
	res := s.mustCall(t, "make_blob", `{"bytes": 2097152}`)
	failed := client.FailedFiles(res)
	if len(failed) != 1 || !strings.Contains(failed[0], "blob.bin") || !strings.Contains(failed[0], "over the cap") {
		t.Fatalf("failed = %q, want blob.bin over the cap", failed)
	}
	if !strings.Contains(modelText(res), "could not fetch") {
		t.Errorf("the model is not told: %q", modelText(res))
	}
	assertModelView(t, res)
	if names := s.reg.Names(); len(names) != 0 {
		t.Errorf("registry holds %v", names)
	}
	assertEmptyDir(t, s.reg.Dir())
}

// An input over the agent's cap is refused before it is sent: the agent
// declares its cap as the x-mcp-file maxSize of each file parameter.
func TestOverCapInputIsRefusedBeforeSending(t *testing.T) {
	a := testagent.Start(t, testagent.Options{MaxUploadBytes: 1 << 20})
	s := connect(t, a, sessionOptions{tune: func(c *client.Config) { c.InlineMaxBytes = 64 << 10 }})
	s.attach(t, "big.bin", randomBytes(t, 2<<20))
	_, err := s.call(t, "inspect_file", `{"source": "big.bin"}`)
	if err == nil || !strings.Contains(err.Error(), "at most 1048576 bytes (its maxSize)") || !strings.Contains(err.Error(), "big.bin") || !strings.Contains(err.Error(), "not sent") {
		t.Fatalf("err = %v, want big.bin refused over the agent's maxSize, unsent", err)
	}
}

func TestForeignDownloadURLIsRefused(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	s := connect(t, a, sessionOptions{})
	res := s.mustCall(t, "foreign_link", `{}`)
	failed := client.FailedFiles(res)
	if len(failed) != 1 || !strings.Contains(failed[0], "198.51.100.7:8080 is refused") {
		t.Fatalf("failed = %q, want the foreign host refused", failed)
	}
	assertModelView(t, res)
	if len(s.reg.Names()) != 0 {
		t.Errorf("registry holds %v", s.reg.Names())
	}
}

func TestBearerTokenForJWTAgents(t *testing.T) {
	secret := strings.Repeat("s3cret-", 6)
	a := testagent.Start(t, testagent.Options{JWTSecret: secret})
	tok := mcptest.BearerToken(t, secret, "alice")
	s := connect(t, a, sessionOptions{token: tok, tune: func(c *client.Config) { c.InlineMaxBytes = -1 }})
	data := randomBytes(t, 4096)
	s.attach(t, "in.bin", data)
	res := s.mustCall(t, "echo_file", `{"source": "in.bin"}`)
	e, err := s.reg.Lookup("echo-in.bin")
	if err != nil || e.SHA256 != sha(data) {
		t.Fatalf("round trip through /uploads and /files with a token: %v %+v (%s)", err, e, modelText(res))
	}
	if s.uploadsOK.Load() != 1 || s.fileGets.Load() != 1 {
		t.Errorf("uploads %d downloads %d, want 1 and 1", s.uploadsOK.Load(), s.fileGets.Load())
	}

	// Without the token for transfers, the upload is refused with the agent's reason.
	s2 := connect(t, a, sessionOptions{token: tok, tune: func(c *client.Config) { c.InlineMaxBytes = -1; c.Token = "" }})
	s2.attach(t, "in.bin", data)
	if _, err := s2.call(t, "echo_file", `{"source": "in.bin"}`); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("upload without token: %v, want 401", err)
	}
}

func TestToolErrorPassesThrough(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	s := connect(t, a, sessionOptions{})
	res, err := s.call(t, "make_blob", `{"bytes": -1}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(modelText(res), "between 0 and 1 GiB") {
		t.Errorf("tool error: %v %q", res.IsError, modelText(res))
	}
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

// otherHost is a plain web server on another port: a host that is not the
// agent's. It serves /file (payload) and /redirect (to redirectTo), and
// records the Authorization header of each request.
type otherHost struct {
	srv        *httptest.Server
	mu         sync.Mutex
	auth       []string
	redirectTo string
}

func startOtherHost(t *testing.T, payload []byte) *otherHost {
	t.Helper()
	o := &otherHost{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.auth = append(o.auth, r.Header.Get("Authorization"))
		o.mu.Unlock()
		switch r.URL.Path {
		case "/file":
			w.Write(payload)
		case "/redirect":
			http.Redirect(w, r, o.redirectTo, http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func TestAllowedHostGetsNoToken(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	payload := []byte("from the CDN")
	cdn := startOtherHost(t, payload)
	host := strings.TrimPrefix(cdn.srv.URL, "http://")
	s := connect(t, a, sessionOptions{token: "not-needed-here", noToken: true,
		tune: func(c *client.Config) { c.AllowHosts = []string{host} }})

	res := s.mustCall(t, "link_to", fmt.Sprintf(`{"url": %q, "filename": "cdn/file.txt", "size": %d}`, cdn.srv.URL+"/file", len(payload)))
	if got := client.ProducedNames(res); len(got) != 1 || got[0] != "cdn/file.txt" {
		t.Fatalf("produced %v, failed %v", got, client.FailedFiles(res))
	}
	cdn.mu.Lock()
	auth := cdn.auth
	cdn.mu.Unlock()
	if len(auth) != 1 || auth[0] != "" {
		t.Errorf("the allowed host got Authorization %q; the token is for the agent's origin only", auth)
	}

	// Without the allow-list, the same loopback host on another port is refused.
	strict := connect(t, a, sessionOptions{})
	res = strict.mustCall(t, "link_to", fmt.Sprintf(`{"url": %q, "filename": "x.txt", "size": 12}`, cdn.srv.URL+"/file"))
	if f := client.FailedFiles(res); len(f) != 1 || !strings.Contains(f[0], host+" is refused") {
		t.Errorf("another port without the allow-list: failed = %q", f)
	}

	// A redirect from an allowed host to one that is not allowed is refused.
	cdn.redirectTo = testagent.ForeignURL
	res = s.mustCall(t, "link_to", fmt.Sprintf(`{"url": %q, "filename": "moved.bin", "size": 4}`, cdn.srv.URL+"/redirect"))
	if f := client.FailedFiles(res); len(f) != 1 || !strings.Contains(f[0], "redirect") || !strings.Contains(f[0], "198.51.100.7:8080 is refused") {
		t.Errorf("redirect to a foreign host: failed = %q", f)
	}

	// A size that does not match what the result says is not registered.
	res = s.mustCall(t, "link_to", fmt.Sprintf(`{"url": %q, "filename": "short.txt", "size": 999}`, cdn.srv.URL+"/file"))
	if f := client.FailedFiles(res); len(f) != 1 || !strings.Contains(f[0], "got 12 bytes, the result says 999") {
		t.Errorf("size mismatch: failed = %q", f)
	}
	if _, err := s.reg.Lookup("short.txt"); err == nil {
		t.Error("a file of the wrong size stayed in the registry")
	}
}

func TestLoopbackNamesAreOneOrigin(t *testing.T) {
	a := testagent.Start(t, testagent.Options{}) // public URL http://127.0.0.1:PORT
	base := strings.Replace(a.Base, "127.0.0.1", "localhost", 1)
	s := connect(t, a, sessionOptions{tune: func(c *client.Config) { c.BaseURL = base }})
	res := s.mustCall(t, "make_blob", `{"bytes": 100000}`)
	if got := client.ProducedNames(res); len(got) != 1 {
		t.Errorf("agent reached as localhost, URLs on 127.0.0.1: produced %v, failed %v", got, client.FailedFiles(res))
	}
}

// The cap holds for a file the result carries embedded as for one that is
// downloaded: MaxDownloadBytes bounds what the registry takes, not only
// what the network brings.
func TestOverCapEmbeddedFileIsRefused(t *testing.T) {
	a := testagent.Start(t, testagent.Options{EmbedMaxBytes: 64 << 10})
	s := connect(t, a, sessionOptions{tune: func(c *client.Config) { c.MaxDownloadBytes = 100 }})
	s.attach(t, "a.txt", bytes.Repeat([]byte("alpha\n"), 200))
	res := s.mustCall(t, "archive_files", `{"sources": "a.txt", "name": "small"}`)
	failed := client.FailedFiles(res)
	if len(failed) == 0 || !strings.Contains(failed[0], "small.zip") || !strings.Contains(failed[0], "over the cap") {
		t.Fatalf("failed = %q, want small.zip over the cap of 100 bytes", failed)
	}
	if _, err := s.reg.Lookup("small.zip"); err == nil {
		t.Error("small.zip, over the cap, is in the registry")
	}
	assertModelView(t, res)
}
