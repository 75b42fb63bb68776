//go:build e2e

package e2e

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/requiretool"
)

// callTimeout bounds one tool call; OCR of one page takes a few seconds.
const callTimeout = 2 * time.Minute

func TestMain(m *testing.M) {
	// Ryuk, testcontainers' reaper, is an image: there is no registry to pull it from.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	// Published ports are on this host's loopback. Left to itself, testcontainers
	// guesses a gateway address when it believes it runs inside a container.
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	}
	os.Exit(m.Run())
}

// repoRoot is the checkout, the library's module root, two folders up from
// this package (whose module replaces the library with it).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	return root
}

// requireDocker ends the test when the engine does not answer: a skip, or
// a failure under AGENTURA_REQUIRE_TOOLS=1, which deploy/e2e.sh (make e2e)
// sets.
func requireDocker(t *testing.T) {
	t.Helper()
	out, err := procgroup.CombinedOutput(exec.Command("docker", "info", "--format", "{{.ServerVersion}}"))
	if err != nil {
		requiretool.Missing(t, fmt.Sprintf("the Docker engine is needed and does not answer (%v: %s); install it with `make deps` and start it", err, bytes.TrimSpace(out)))
	}
}

// freePort returns a loopback TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// scanLines is the text of the generated scan; the test looks for its words.
var scanLines = []string{"Agentura deploy check", "Invoice number 4711", "Total due 1234 EUR"}

// scanPNG renders scanLines black on white in Go Regular at a size tesseract
// reads reliably, like a 300 dpi scan of a printed page.
func scanPNG(t *testing.T) []byte {
	t.Helper()
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		t.Fatal(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 36, DPI: 144, Hinting: font.HintingFull})
	if err != nil {
		t.Fatal(err)
	}
	defer face.Close()
	img := image.NewGray(image.Rect(0, 0, 1400, 120+len(scanLines)*110))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: face}
	for i, line := range scanLines {
		d.Dot = fixed.P(80, 130+i*110)
		d.DrawString(line)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func dataURI(mime, name string, b []byte) string {
	return "data:" + mime + ";name=" + name + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// connectMCP connects an mcp-go streamable HTTP client (an independent
// implementation), pinned to mcptest.Protocol, to the agent at base; it is
// closed when the test ends.
func connectMCP(t *testing.T, base string) *client.Client {
	t.Helper()
	c, _ := mcptest.Connect(t, base+"/mcp")
	return c
}

// callTool calls name with args and returns its structured content; a
// protocol error or a tool error fails the test.
func callTool(t *testing.T, c *client.Client, name string, args map[string]any) map[string]any {
	t.Helper()
	res, text := rawCall(t, c, name, args)
	if res.IsError {
		t.Fatalf("%s returned a tool error: %s", name, text)
	}
	out := mcptest.Structured[map[string]any](t, res)
	if out == nil {
		t.Fatalf("%s: no structured content; text: %s", name, text)
	}
	return out
}

// toolError calls name with args, which must fail as a tool error, and
// returns the error's text.
func toolError(t *testing.T, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	res, text := rawCall(t, c, name, args)
	if !res.IsError {
		t.Fatalf("%s succeeded; want a tool error", name)
	}
	return text
}

// rawCall calls name with args and returns the result and its text blocks
// joined; a protocol error fails the test.
func rawCall(t *testing.T, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res := mcptest.CallTool(t, c, name, args)
	return res, mcptest.Text(res)
}

// fileOf returns the download URL of the output named name in a tool's
// structured content: flat for one file, under "files" for several.
func fileOf(t *testing.T, out map[string]any, name string) string {
	t.Helper()
	files := []any{out}
	if list, ok := out["files"].([]any); ok {
		files = list
	}
	var seen []string
	for _, f := range files {
		m, _ := f.(map[string]any)
		fn, _ := m["filename"].(string)
		if u, _ := m["download_url"].(string); fn == name && u != "" {
			return u
		}
		seen = append(seen, fn)
	}
	t.Fatalf("no output %q; the result names %v (%v)", name, seen, out)
	return ""
}

// upload stages b at the agent's POST /uploads and returns the signed URL.
func upload(t *testing.T, base, name string, b []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(b)
	mw.Close()
	resp, err := http.Post(base+"/uploads", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatalf("upload to %s: %v", base, err)
	}
	defer resp.Body.Close()
	var out struct {
		URL   string `json:"url"`
		Error string `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated || out.URL == "" {
		t.Fatalf("upload to %s: %s %s", base, resp.Status, out.Error)
	}
	return out.URL
}

func redact(url string) string {
	if i := strings.IndexByte(url, '?'); i >= 0 {
		return url[:i] + "?…"
	}
	return url
}

// zipEntries returns the members of a ZIP container (PPTX, DOCX) by name.
func zipEntries(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a ZIP container (%d bytes): %v", len(b), err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = data
	}
	return out
}

// run runs a command with extra environment and fails the test with its
// output when it fails.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := procgroup.CombinedOutput(cmd)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// processUID reads the real user id of a container's main process from the
// host's /proc: what the kernel says, not what the image claims.
func processUID(t *testing.T, container string) string {
	t.Helper()
	pid := strings.TrimSpace(run(t, nil, "docker", "inspect", "-f", "{{.State.Pid}}", container))
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		t.Fatalf("read the status of %s's process %s: %v", container, pid, err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			return strings.Fields(rest)[0]
		}
	}
	t.Fatalf("no Uid line in /proc/%s/status", pid)
	return ""
}

func must(t *testing.T, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

// zipHolds reports whether a ZIP container holds a member with exactly b.
func zipHolds(t *testing.T, container, b []byte) bool {
	t.Helper()
	for _, data := range zipEntries(t, container) {
		if bytes.Equal(data, b) {
			return true
		}
	}
	return false
}
