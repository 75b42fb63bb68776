// Package attack runs a catalogue of attacks against the built agents (the
// example file agent and the composer) on loopback, each asserting the safe
// outcome: forged and misused tokens, hostile names and paths, SSRF, size
// and resource exhaustion, served content, auth and isolation, protocol
// abuse. It is the standing form of the attack probe of 2026-12-01: an
// escape that comes back fails `make check`.
package attack

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

const (
	signingKey = "attack-suite-signing-key-0123456789abcdef"
	jwtSecret  = "attack-suite-caller-secret-0123456789abcdef"
	audience   = "https://fileagent.attack.test"
	issuer     = "https://idp.attack.test"
	uploadCap  = 1 << 20
)

// env is the agents every case may use, started once.
type env struct {
	open     *mcptest.Agent // fileagent, AGENT_AUTH=none, input roots
	jwt      *mcptest.Agent // fileagent, AGENT_AUTH=jwt with audience and issuer
	composer *mcptest.Agent
	root     string // the open agent's input root
	outside  string // a folder outside it
	redirect string // base URL of a server the open agent may fetch, which redirects
}

var (
	setupOnce sync.Once
	shared    *env
	setupErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	os.Exit(mcptest.Main(m, "attack", func(dir string) error {
		binDir = dir
		return nil
	}))
}

// agents starts the agents once for the whole package.
func agents(t *testing.T) *env {
	t.Helper()
	setupOnce.Do(func() { shared, setupErr = start(t) })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return shared
}

var (
	buildMu sync.Mutex
	built   = map[string]*builtBinary{}
)

type builtBinary struct {
	once sync.Once
	path string
	err  error
}

// binary builds the command package pkg once for the package's tests.
func binary(t *testing.T, pkg string) string {
	t.Helper()
	buildMu.Lock()
	b := built[pkg]
	if b == nil {
		b = &builtBinary{}
		built[pkg] = b
	}
	buildMu.Unlock()
	b.once.Do(func() { b.path, b.err = mcptest.Build(binDir, pkg, false) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// fileagentBinary builds the example agent once for the package.
func fileagentBinary(t *testing.T) string {
	return binary(t, "github.com/agentura/agentura/examples/fileagent/cmd/fileagent")
}

// starter keeps the agents alive for the package, not for one test: they
// are started under a long-lived testing.TB of their own.
func start(t *testing.T) (*env, error) {
	fileBin := fileagentBinary(t)
	compBin, err := mcptest.Build(binDir, "github.com/agentura/agentura/cmd/composer-agent", false, "CGO_ENABLED=0")
	if err != nil {
		return nil, err
	}
	e := &env{root: filepath.Join(binDir, "root"), outside: filepath.Join(binDir, "outside")}
	os.MkdirAll(e.root, 0o755)
	os.MkdirAll(filepath.Join(e.root, "sub"), 0o755)
	os.MkdirAll(e.outside, 0o755)
	os.WriteFile(filepath.Join(e.root, "ok.txt"), []byte("inside file content\n"), 0o644)
	os.WriteFile(filepath.Join(e.outside, "secret.txt"), []byte("outside secret\n"), 0o644)
	os.Symlink(filepath.Join(e.outside, "secret.txt"), filepath.Join(e.root, "link.txt"))
	os.Symlink(e.outside, filepath.Join(e.root, "linkdir"))
	syscall.Mkfifo(filepath.Join(e.root, "fifo.txt"), 0o644)
	big := bytes.Repeat([]byte("x"), uploadCap+10)
	os.WriteFile(filepath.Join(e.root, "big.bin"), big, 0o644)

	redirect := newRedirector()
	e.redirect = redirect

	data := filepath.Join(binDir, "open-data")
	os.MkdirAll(data, 0o700)
	keyFile := filepath.Join(data, "keys.txt")
	os.WriteFile(keyFile, []byte(signingKey+"\n"), 0o600)
	// A hard link to the signing key inside the input root (same file system).
	os.Link(keyFile, filepath.Join(e.root, "key-link.txt"))

	lt := &longLived{T: t}
	e.open = mcptest.NewAgent(lt, fileBin,
		"AGENT_DATA_DIR="+data,
		"AGENT_SIGNING_KEY_FILE="+keyFile,
		"AGENT_INPUT_ROOTS="+e.root,
		"AGENT_MCP_STATELESS=true",
		fmt.Sprintf("AGENT_MAX_UPLOAD_BYTES=%d", uploadCap),
		fmt.Sprintf("AGENT_MAX_CALL_INPUT_BYTES=%d", 3*uploadCap),
		"AGENT_FETCH_ALLOW_HOSTS="+strings.TrimPrefix(redirect, "http://"),
		"AGENT_FETCH_TIMEOUT=5s",
	)
	e.jwt = mcptest.NewAgent(lt, fileBin,
		"AGENT_SIGNING_KEY="+signingKey,
		"AGENT_AUTH=jwt",
		"AGENT_AUTH_JWT_SECRET="+jwtSecret,
		"AGENT_AUTH_JWT_AUDIENCE="+audience,
		"AGENT_AUTH_JWT_ISSUER="+issuer,
		"AGENT_MCP_STATELESS=true",
		fmt.Sprintf("AGENT_MAX_UPLOAD_BYTES=%d", uploadCap),
	)
	e.composer = mcptest.NewAgent(lt, compBin, "AGENT_MCP_STATELESS=true", "AGENT_SIGNING_KEY="+signingKey)
	for _, a := range []*mcptest.Agent{e.open, e.jwt, e.composer} {
		a.Start(lt)
	}
	for _, a := range []*mcptest.Agent{e.open, e.jwt, e.composer} {
		a.WaitReady(lt)
	}
	return e, nil
}

// longLived is a testing.TB whose cleanups run when the package's tests end
// (mcptest.Main removes the folder; the processes are killed by
// stopAgents), not when the first test that started them ends.
type longLived struct {
	*testing.T
}

var cleanups []func()

func (l *longLived) Cleanup(f func()) { cleanups = append(cleanups, f) }
func (l *longLived) TempDir() string {
	d, _ := os.MkdirTemp(binDir, "agent-")
	return d
}

// TestZZStopAgents runs last (tests run in source order, files by name):
// it stops the agents and checks that none of them crashed meanwhile.
func stopAgents(t *testing.T) {
	if shared == nil {
		return
	}
	for _, a := range []*mcptest.Agent{shared.open, shared.jwt, shared.composer} {
		select {
		case <-a.Exited():
			t.Errorf("%s exited during the attacks:\n%s", a.Cmd.Path, a.Logs())
		default:
		}
		a.Stop(t)
	}
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
}

// reply is an HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) String() string {
	b := string(r.body)
	if len(b) > 400 {
		b = b[:400] + "…"
	}
	return fmt.Sprintf("%d %s", r.status, b)
}

var client = &http.Client{Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// do sends a request; hdr is pairs of header names and values ("Host" sets
// the Host).
func do(t *testing.T, method, url string, body io.Reader, hdr ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		switch hdr[i] {
		case "Host":
			req.Host = hdr[i+1]
		case "Content-Length":
			fmt.Sscan(hdr[i+1], &req.ContentLength)
		default:
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return reply{resp.StatusCode, resp.Header, b}
}

// rawPost sends a POST whose Content-Length header claims length while the
// body is body (the http client refuses to), and reads the answer.
func rawPost(t *testing.T, base, path string, length int64, body string) reply {
	t.Helper()
	u, _ := url.Parse(base)
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", path, u.Host, length, body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return reply{resp.StatusCode, resp.Header, b}
}

// rpc posts a JSON-RPC message to /mcp (stateless) and returns the reply
// and the JSON-RPC response it carried (also from an event stream).
func rpc(t *testing.T, a *mcptest.Agent, token string, msg any) (reply, map[string]any) {
	t.Helper()
	raw, ok := msg.([]byte)
	if !ok {
		raw, _ = json.Marshal(msg)
	}
	hdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
	if token != "" {
		hdr = append(hdr, "Authorization", "Bearer "+token)
	}
	r := do(t, http.MethodPost, a.URL+"/mcp", bytes.NewReader(raw), hdr...)
	body := r.body
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(r.body))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				body = []byte(d)
			}
		}
	}
	var out map[string]any
	json.Unmarshal(body, &out)
	return r, out
}

// toolResult is a tools/call's outcome.
type toolResult struct {
	isError bool
	text    string
	data    map[string]any
	reply   reply
}

// call runs a tool on agent a with the caller's token (may be empty).
func call(t *testing.T, a *mcptest.Agent, token, tool string, args map[string]any) toolResult {
	t.Helper()
	r, out := rpc(t, a, token, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	res := toolResult{reply: r}
	if out == nil {
		res.isError, res.text = true, r.String()
		return res
	}
	if e, ok := out["error"].(map[string]any); ok {
		res.isError = true
		res.text = fmt.Sprint(e["message"], " ", e["data"])
		return res
	}
	if e, ok := out["error"].(string); ok || r.status >= 300 { // an HTTP refusal
		res.isError, res.text = true, e
		if !ok {
			res.text = r.String()
		}
		return res
	}
	result, _ := out["result"].(map[string]any)
	res.isError, _ = result["isError"].(bool)
	content, _ := result["content"].([]any)
	var texts []string
	for _, c := range content {
		if m, ok := c.(map[string]any); ok && m["type"] == "text" {
			texts = append(texts, fmt.Sprint(m["text"]))
		}
	}
	res.text = strings.Join(texts, "\n")
	res.data, _ = result["structuredContent"].(map[string]any)
	return res
}

// files lists the download URLs of a successful result.
func (r toolResult) files() []map[string]any {
	if r.data == nil {
		return nil
	}
	if fs, ok := r.data["files"].([]any); ok {
		var out []map[string]any
		for _, f := range fs {
			out = append(out, f.(map[string]any))
		}
		return out
	}
	if _, ok := r.data["download_url"]; ok {
		return []map[string]any{r.data}
	}
	return nil
}

// dataURI is a data URI of b named name.
func dataURI(name string, b []byte) string {
	return "data:application/octet-stream;name=" + name + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// upload stages body on agent a under name and returns its signed URL.
func upload(t *testing.T, a *mcptest.Agent, token, name string, body []byte) (reply, string) {
	t.Helper()
	hdr := []string{"X-Filename", name}
	if token != "" {
		hdr = append(hdr, "Authorization", "Bearer "+token)
	}
	r := do(t, http.MethodPost, a.URL+"/uploads", bytes.NewReader(body), hdr...)
	var u struct {
		URL string `json:"url"`
	}
	json.Unmarshal(r.body, &u)
	return r, u.URL
}

// leaks reports which of the agent's secrets or paths text shows.
func leaks(text string) []string {
	var out []string
	for _, s := range []string{signingKey, jwtSecret, filepath.Join(binDir, "open-data"), filepath.Join(binDir, "agent-"), "/calls/", "inside file content", "outside secret", "root:x:0:0"} {
		if strings.Contains(text, s) {
			out = append(out, s)
		}
	}
	return out
}
