package main

// Tests of the built agentura binary against a real agent: agentcore serving
// the example agent's tools and the host-side test tools over HTTP
// (internal/testkit/testagent), and the example agent's binary over stdio.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
	"github.com/agentura/agentura/internal/testkit/testagent"
)

var (
	cliBin   string // the agentura binary, built by TestMain
	agentBin string // the fileagent binary, for --stdio
)

func TestMain(m *testing.M) {
	os.Exit(mcptest.Main(m, "agentura-cli", func(dir string) (err error) {
		// With -race when the tests run with it.
		if cliBin, err = mcptest.Build(dir, ".", mcptest.RaceEnabled()); err != nil {
			return err
		}
		agentBin, err = mcptest.Build(dir, "../../examples/fileagent/cmd/fileagent", mcptest.RaceEnabled())
		return err
	}))
}

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runCLIEnv(t, dir, nil, args...)
}

// runCLIEnv runs the binary in dir with env added to the environment.
func runCLIEnv(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := procgroup.Run(cmd)
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run agentura %v: %v", args, err)
	}
	return r
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func pngFile(t *testing.T, path string, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 16, 12))
	for y := range 12 {
		for x := range 16 {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	writeFile(t, path, buf.Bytes())
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func shaFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return sha(b)
}

func TestToolsMarksFileParams(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	r := runCLI(t, t.TempDir(), "tools", a.Endpoint)
	if r.code != 0 {
		t.Fatal(r)
	}
	for _, want := range []string{
		"inspect_file\n    Tell a file's type, size and SHA-256 digest.\n    params: source [file]\n    file fields: source\n",
		"params: name, show_images, sources [file]",
		"compose_page\n",
		"params: embeds [file], markdown\n    file fields: embeds[].content\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("tools output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, t.TempDir(), "tools", "--output", "json", a.Base) // a bare base URL gets /mcp
	var tools []toolInfo
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || r.code != 0 {
		t.Fatalf("json: %v\n%s", err, r)
	}
	got := map[string]string{}
	for _, tl := range tools {
		got[tl.Name] = strings.Join(tl.FileParams, ",")
	}
	if got["archive_files"] != "sources" || got["compose_page"] != "embeds[].content" || got["make_blob"] != "" {
		t.Errorf("file params = %v", got)
	}
}

func TestCallSavesProducedFilesWithSubfolders(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	dir := t.TempDir()
	chart := pngFile(t, filepath.Join(dir, "chart.png"), color.RGBA{255, 0, 0, 255})
	pngFile(t, filepath.Join(dir, "photo.png"), color.RGBA{0, 0, 255, 255})
	args := []string{"call", a.Endpoint, "compose_page", "--attach", "chart.png", "--attach", "photo.png",
		"--json", `{"markdown": "# Report", "embeds": [{"name": "chart.png"}, {"name": "photo.png", "description": "a photo"}]}`,
		"--out", "results"}
	r := runCLI(t, dir, args...)
	if r.code != 0 {
		t.Fatal(r)
	}
	for _, want := range []string{
		"Composed a page with 2 image(s).\nTool produced: page.md (Markdown, ",
		"Tool produced: images/chart.png (PNG image, ",
		"Saved:\n  results/page.md\n  results/images/chart.png\n  results/images/photo.png\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stdout, "http") || r.stderr != "" {
		t.Errorf("a URL or noise in the output:\n%s", r)
	}
	if got := shaFile(t, filepath.Join(dir, "results/images/chart.png")); got != sha(chart) {
		t.Errorf("saved chart.png differs: %s", got)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "results/page.md"))
	if !strings.Contains(string(page), "![a photo](images/photo.png)") {
		t.Errorf("page.md = %q", page)
	}

	// Again into the same folder: nothing is overwritten.
	r = runCLI(t, dir, args...)
	if r.code != 0 || !strings.Contains(r.stdout, "results/page (2).md") || !strings.Contains(r.stdout, "results/images/chart (2).png") {
		t.Errorf("second run:\n%s", r)
	}
}

func TestCallLargeFileRoundTripJSON(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	dir := t.TempDir()
	data := make([]byte, 30<<20)
	rand.Read(data)
	writeFile(t, filepath.Join(dir, "big.bin"), data)
	r := runCLI(t, dir, "call", a.Endpoint, "echo_file", "--attach", "big.bin",
		"--json", `{"source": "big.bin"}`, "--out", "o", "--output", "json")
	if r.code != 0 {
		t.Fatal(r)
	}
	if r.stderr != "" {
		t.Errorf("--output json should be quiet on stderr: %q", r.stderr)
	}
	var out callOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if len(out.Files) != 1 || out.Files[0].Path != "o/echo-big.bin" || out.Files[0].SHA256 != sha(data) || out.Files[0].Size != 30<<20 {
		t.Fatalf("files = %+v", out.Files)
	}
	if got := shaFile(t, filepath.Join(dir, "o/echo-big.bin")); got != sha(data) {
		t.Errorf("the 30 MiB file came back different")
	}
	sc, _ := out.Structured.(map[string]any)
	if sc["filename"] != "echo-big.bin" || sc["download_url"] != nil {
		t.Errorf("structured content = %v", out.Structured)
	}
	if !strings.Contains(out.Text, "Tool produced: echo-big.bin (binary, 30.0 MB)") || strings.Join(out.Attached, ",") != "big.bin" {
		t.Errorf("text %q attached %v", out.Text, out.Attached)
	}
	if !strings.Contains(a.Metric(t, "agentura_uploads_total"), `status="201"} 1`) {
		t.Errorf("the 30 MiB file did not go through /uploads: %s", a.Metric(t, "agentura_uploads_total"))
	}
}

func TestCallFailures(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "invoice.pdf"), []byte("%PDF-1.4\n"))
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing name", []string{"call", a.Endpoint, "inspect_file", "--attach", "invoice.pdf", "--json", `{"source": "invoce.pdf"}`},
			1, `file "invoce.pdf" is not in the registry; the files known are: invoice.pdf`},
		{"tool error", []string{"call", a.Endpoint, "make_blob", "--json", `{"bytes": -1}`},
			1, "make_blob failed: bytes must be between 0 and 1 GiB"},
		{"foreign host", []string{"call", a.Endpoint, "foreign_link"},
			1, "evil.bin: download evil.bin: download URL not on the agent's origin nor an allowed host: http://198.51.100.7:8080 is refused"},
		{"over cap", []string{"call", a.Endpoint, "make_blob", "--json", `{"bytes": 3000000}`, "--max-download", "1MiB", "--out", "o"},
			1, "over the cap of 1048576"},
		{"no such attachment", []string{"call", a.Endpoint, "inspect_file", "--attach", "nope.pdf"},
			1, "attach nope.pdf: open nope.pdf: no such file or directory"},
		{"bad json", []string{"call", a.Endpoint, "inspect_file", "--json", `{"source": `}, 2, "--json is not a JSON object"},
		{"too few arguments", []string{"call", a.Endpoint}, 2, "want 2 argument(s) (the agent's URL, the tool), got 1"},
		{"stdio without command", []string{"call", "--stdio", "inspect_file"}, 2, "--stdio needs the agent's command after --"},
		{"unknown command", []string{"fetch"}, 2, `unknown command "fetch"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, dir, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Errorf("want exit %d and %q on stderr; got\n%s", c.code, c.want, r)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "o")); !os.IsNotExist(err) {
		t.Errorf("the over-cap file left something in the out folder: %v", err)
	}
}

func TestCallStdioAgent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), []byte("alpha\n"))
	port := freePort(t)
	r := runCLI(t, dir, "call", "--stdio", "--base-url", "http://127.0.0.1:"+port, "archive_files",
		"--attach", "a.txt", "--json", `{"sources": "a.txt", "name": "pack"}`, "--out", "o", "--output", "json", "--",
		"env", "AGENT_ADDR=127.0.0.1:"+port, "AGENT_PUBLIC_URL=http://127.0.0.1:"+port, "AGENT_DATA_DIR="+filepath.Join(dir, "data"),
		"AGENT_EMBED_MAX_BYTES=0", agentBin, "--stdio")
	if r.code != 0 {
		t.Fatal(r)
	}
	var out callOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err, r)
	}
	if len(out.Files) != 2 || out.Files[1].Path != "o/pack/SHA256SUMS" {
		t.Fatalf("files = %+v", out.Files)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "o/pack/SHA256SUMS"))
	if string(b) != sha([]byte("alpha\n"))+"  a.txt\n" {
		t.Errorf("SHA256SUMS = %q", b)
	}

	r = runCLI(t, dir, "tools", "--stdio", "--", "env", "AGENT_ADDR=127.0.0.1:"+freePort(t),
		"AGENT_DATA_DIR="+filepath.Join(dir, "data2"), agentBin, "--stdio")
	if r.code != 0 || !strings.Contains(r.stdout, "params: source [file]") {
		t.Errorf("tools over stdio:\n%s", r)
	}
}

func TestCallWithTokenForJWTAgents(t *testing.T) {
	secret := strings.Repeat("cli-secret-", 4)
	a := testagent.Start(t, testagent.Options{JWTSecret: secret})
	tok := mcptest.BearerToken(t, secret, "bob")
	dir := t.TempDir()
	data := []byte(strings.Repeat("token-guarded bytes\n", 100))
	writeFile(t, filepath.Join(dir, "in.txt"), data)
	args := []string{"call", a.Endpoint, "echo_file", "--attach", "in.txt", "--json", `{"source": "in.txt"}`,
		"--inline-max", "0", "--out", "o"} // --inline-max 0: every file goes through /uploads
	r := runCLIEnv(t, dir, []string{"AGENTURA_TOKEN=" + tok}, args...)
	if r.code != 0 || shaFile(t, filepath.Join(dir, "o/echo-in.txt")) != sha(data) {
		t.Fatalf("with $AGENTURA_TOKEN:\n%s", r)
	}
	if got := a.Metric(t, "agentura_uploads_total"); !strings.Contains(got, `status="201"} 1`) {
		t.Errorf("the file did not go through /uploads: %s", got)
	}
	r = runCLIEnv(t, dir, []string{"AGENTURA_TOKEN="}, args...)
	if r.code != 1 || !strings.Contains(r.stderr, "Unauthorized: the agent wants a bearer token: give it with --token or $AGENTURA_TOKEN (AGENT_AUTH=jwt)") {
		t.Errorf("without a token: want exit 1 and what to do:\n%s", r)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	_, port, _ := net.SplitHostPort(mcptest.FreeAddr(t))
	return port
}

// A long tool's call runs as an MCP task: the CLI says so and how to
// resume, follows the task to its end and saves its file; Ctrl-C leaves
// the task running and prints the command that picks it up, which then
// saves the result from another process; "agentura task cancel" cancels
// one; --task never holds the request open as before.
func TestCallLongToolAsTask(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	dir := t.TempDir()
	r := runCLI(t, dir, "call", a.Endpoint, "long_sleep", "--json", `{"millis": 2500}`, "--out", "done")
	if r.code != 0 || !strings.Contains(r.stderr, "the agent runs the call as a task; if this stops, resume with: agentura task get "+a.Endpoint) ||
		!strings.Contains(r.stderr, "completed") {
		t.Fatalf("a long call:\n%s", r)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "done", "slept.txt")); err != nil || string(b) != "slept 2500 ms\n" {
		t.Errorf("the task's file: %q %v", b, err)
	}

	// Ctrl-C, then resumption by another process.
	cmd := exec.Command(cliBin, "call", a.Endpoint, "long_sleep", "--json", `{"millis": 4000}`, "--out", "later")
	cmd.Dir = dir
	var out bytes.Buffer
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = &out
	if _, err := procgroup.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	var errText strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(errText.String(), "resume with") {
		n, err := stderr.Read(buf)
		errText.Write(buf[:n])
		if err != nil {
			t.Fatalf("the CLI ended before naming its task: %s", errText.String())
		}
	}
	cmd.Process.Signal(os.Interrupt)
	rest, _ := io.ReadAll(stderr)
	errText.Write(rest)
	err := cmd.Wait()
	ee, _ := err.(*exec.ExitError)
	hint := regexp.MustCompile(`agentura task get \S+ (\S+)`).FindStringSubmatch(errText.String())
	if ee == nil || ee.ExitCode() != 1 || hint == nil || !strings.Contains(errText.String(), "the agent goes on with it") {
		t.Fatalf("Ctrl-C during a task: %v\n%s", err, errText.String())
	}
	r = runCLI(t, dir, "task", "get", a.Endpoint, hint[1], "--out", "later")
	if r.code != 0 || !strings.Contains(r.stdout, "later/slept.txt") {
		t.Fatalf("agentura task get after Ctrl-C:\n%s", r)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "later", "slept.txt")); err != nil || string(b) != "slept 4000 ms\n" {
		t.Errorf("the resumed task's file: %q %v", b, err)
	}

	r = runCLI(t, dir, "call", a.Endpoint, "long_sleep", "--json", `{"millis": 60000}`, "--timeout", "2s")
	hint = regexp.MustCompile(`agentura task get \S+ (\S+)`).FindStringSubmatch(r.stderr)
	if r.code != 1 || hint == nil {
		t.Fatalf("a call whose --timeout ends first:\n%s", r)
	}
	r = runCLI(t, dir, "task", "cancel", a.Endpoint, hint[1], "--output", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"status": "cancelled"`) {
		t.Errorf("agentura task cancel:\n%s", r)
	}

	r = runCLI(t, dir, "call", a.Endpoint, "long_sleep", "--json", `{"millis": 1500}`, "--task", "never", "--out", "never")
	if r.code != 0 || strings.Contains(r.stderr, "task") || !strings.Contains(r.stdout, "never/slept.txt") {
		t.Errorf("--task never:\n%s", r)
	}
}
