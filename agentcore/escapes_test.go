package agentcore

// Tests of the fixes for the attack probe of 2026-12-01 (issue 14); each
// fails without its fix.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/transfer"
)

// E8: a validation error over a huge argument is a few KiB, however the
// input is shaped.
func TestValidationErrorsAreBounded(t *testing.T) {
	svc := newTestService(t, nil)
	addEchoTool(svc)
	chunks := make([]string, 3000)
	for i := range chunks {
		chunks[i] = strings.Repeat("QUFB", 250)
	}
	zeros := make([]int, 200_000)
	for _, arg := range []any{chunks, zeros} {
		raw, _ := json.Marshal(map[string]any{"source": arg})
		_, err := svc.Invoke(context.Background(), "echo", "", raw)
		if err == nil {
			t.Fatal("invalid arguments accepted")
		}
		if n := len(err.Error()); n > maxCallerError {
			t.Errorf("error text of %d bytes for a %d-byte argument, want at most %d", n, len(raw), maxCallerError)
		}
	}
}

// E12: a name at the length limit still fits once a tool adds to it, and a
// file error under the agent's folders shows neither the path nor the OS
// error string.
func TestLongNamesFitAndFileErrorsHideServerPaths(t *testing.T) {
	svc := newTestService(t, nil)
	type in struct {
		Name string `json:"name"`
	}
	AddTool(svc, Tool{Name: "zipname", Description: "x"}, func(ctx context.Context, call *Call, in in) (*Result, error) {
		dir, err := call.WorkDir()
		if err != nil {
			return nil, err
		}
		name := SanitizeName(in.Name)
		if err := os.WriteFile(filepath.Join(dir, "out-"+name+".zip"), []byte("z"), 0o600); err != nil {
			return nil, err
		}
		return &Result{Text: name}, nil
	})
	AddTool(svc, Tool{Name: "rawname", Description: "x"}, func(ctx context.Context, call *Call, in in) (*Result, error) {
		dir, err := call.WorkDir()
		if err != nil {
			return nil, err
		}
		return nil, os.WriteFile(filepath.Join(dir, in.Name), []byte("z"), 0o600)
	})
	long, _ := json.Marshal(map[string]string{"name": strings.Repeat("A", 300)})
	if _, err := svc.Invoke(context.Background(), "zipname", "", long); err != nil {
		t.Errorf("a 300-byte name with a prefix and suffix added: %v", err)
	}
	_, err := svc.Invoke(context.Background(), "rawname", "", long)
	if err == nil {
		t.Fatal("a 300-byte file name was created")
	}
	data, _ := filepath.Abs(svc.cfg.DataDir)
	for _, leak := range []string{data, "file name too long", "calls/"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("tool error %q shows %q", err, leak)
		}
	}
	if !strings.Contains(err.Error(), "shorter name") {
		t.Errorf("tool error %q does not say what to do", err)
	}
}

// E10: /a2a, /uploads and the card refuse a foreign Host on loopback (DNS
// rebinding), and POSTs from a foreign Origin unless it is allowed.
func TestBrowsersCannotReachA2AOrUploadsCrossSite(t *testing.T) {
	_, srv := serveTestService(t, func(c *Config) { c.AllowedOrigins = []string{"https://app.example"} })
	send := func(method, path, host, origin string) int {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`))
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Filename", "a.txt")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	evilHost := "evil.example:" + strings.Split(srv.Listener.Addr().String(), ":")[1]
	for _, path := range []string{transfer.A2APath, "/uploads", transfer.AgentCardPath} {
		method := http.MethodPost
		if path == transfer.AgentCardPath {
			method = http.MethodGet
		}
		if code := send(method, path, evilHost, ""); code != http.StatusForbidden {
			t.Errorf("%s %s with Host %s = %d, want 403", method, path, evilHost, code)
		}
		if code := send(method, path, "", ""); code == http.StatusForbidden {
			t.Errorf("%s %s from a plain client refused", method, path)
		}
	}
	for _, path := range []string{transfer.A2APath, "/uploads"} {
		if code := send(http.MethodPost, path, "", "http://evil.example"); code != http.StatusForbidden {
			t.Errorf("POST %s with a foreign Origin = %d, want 403", path, code)
		}
		if code := send(http.MethodPost, path, "", "https://app.example"); code == http.StatusForbidden {
			t.Errorf("POST %s from an allowed origin refused", path)
		}
		if code := send(http.MethodPost, path, "", srv.URL); code == http.StatusForbidden {
			t.Errorf("POST %s from the agent's own origin refused", path)
		}
	}
}

// Also noted: a hard link to the signing key placed in an input root is
// refused, as is a hard link to any stored file.
func TestHardLinkToTheSigningKeyIsRefused(t *testing.T) {
	root := t.TempDir()
	data := t.TempDir()
	svc := newTestService(t, func(c *Config) { c.DataDir = data; c.InputRoots = []string{root} })
	addEchoTool(svc)
	if err := os.Link(filepath.Join(data, "signing.key"), filepath.Join(root, "notes.txt")); err != nil {
		t.Skipf("cannot make a hard link here: %v", err)
	}
	os.WriteFile(filepath.Join(root, "plain.txt"), []byte("plain"), 0o600)
	raw, _ := json.Marshal(map[string]any{"source": map[string]any{"name": "n.txt", "content": filepath.Join(root, "notes.txt")}})
	if _, err := svc.Invoke(context.Background(), "echo", "", raw); err == nil || !strings.Contains(err.Error(), "signing key") {
		t.Errorf("hard link to the signing key: %v, want a refusal", err)
	}
	raw, _ = json.Marshal(map[string]any{"source": map[string]any{"name": "p.txt", "content": filepath.Join(root, "plain.txt")}})
	if _, err := svc.Invoke(context.Background(), "echo", "", raw); err != nil {
		t.Errorf("a plain file under the root: %v", err)
	}
}

// Also noted: the password of a URL input never comes back in an error.
func TestFetchErrorsHideURLPasswords(t *testing.T) {
	svc := newTestService(t, nil)
	addEchoTool(svc)
	for _, u := range []string{"http://user:s3cretpw@127.0.0.1:1/x.txt", "http://user:s3cretpw@[::1/x", "https://user:s3cretpw@host.invalid/a.txt"} {
		raw, _ := json.Marshal(map[string]any{"source": map[string]any{"name": "a.txt", "content": u}})
		_, err := svc.Invoke(context.Background(), "echo", "", raw)
		if err == nil || strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// E3: the same input listed many times is resolved once; distinct inputs
// share the call's budget (AGENT_MAX_CALL_INPUT_BYTES).
func TestCallInputsAreResolvedOnceAndBudgeted(t *testing.T) {
	svc := newTestService(t, func(c *Config) { c.MaxUploadBytes = 1000; c.MaxCallInputBytes = 2500 })
	call := svc.newCall("t", "alice", "")
	defer call.end()
	uri := "data:;base64," + b64(make([]byte, 1000))
	for i := range 300 {
		if _, err := call.ResolveFile(context.Background(), "a.bin", uri); err != nil {
			t.Fatalf("copy %d of one input: %v", i, err)
		}
	}
	if n := len(filesIn(t, call.dir)); n != 1 {
		t.Errorf("300 listings of one input made %d files, want 1", n)
	}
	if _, err := call.ResolveFile(context.Background(), "b.bin", uri); err != nil {
		t.Fatalf("second distinct input: %v", err)
	}
	_, err := call.ResolveFile(context.Background(), "c.bin", uri)
	if !errors.Is(err, ErrCallInputsTooLarge) || !strings.Contains(err.Error(), "AGENT_MAX_CALL_INPUT_BYTES") {
		t.Errorf("third input over the budget: %v", err)
	}
	if n := len(filesIn(t, call.dir)); n != 2 {
		t.Errorf("%d files after the refused input, want 2", n)
	}
}

// The unclear errors of the probe, each now saying what was wrong.
func TestUnclearErrorsSayWhatIsWrong(t *testing.T) {
	svc, srv := serveTestService(t, nil)
	addEchoTool(svc)
	invoke := func(content string) string {
		t.Helper()
		raw, _ := json.Marshal(map[string]any{"source": map[string]any{"name": "a.bin", "content": content}})
		_, err := svc.Invoke(context.Background(), "echo", "", raw)
		if err == nil {
			return ""
		}
		return err.Error()
	}
	// "//etc/passwd" used to decode as 9 bytes of base64.
	if msg := invoke("//etc/passwd"); !strings.Contains(msg, "path") {
		t.Errorf("//etc/passwd: %q, want a refusal naming the ambiguity", msg)
	}
	// The offset of a bad base64 character is its offset in the content.
	bad := strings.Repeat("QUFB", 3000) + "!" + strings.Repeat("QUFB", 10)
	if msg := invoke("data:;base64," + bad); !strings.Contains(msg, "byte 12000") {
		t.Errorf("bad base64: %q, want the offset 12000", msg)
	}
	post := func(path, body string, hdr ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// A JSON-RPC request with an id and no method.
	if code, body := post("/mcp", `{"jsonrpc":"2.0","id":7}`); code != http.StatusBadRequest || !strings.Contains(body, "-32600") || !strings.Contains(body, "method") {
		t.Errorf("id without method = %d %q", code, body)
	}
	// A part written with "type" as in the specification.
	if _, body := post(transfer.A2APath, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"type":"file","file":{"name":"a.txt","bytes":"YQ=="}}]}}}`); !strings.Contains(body, `not type`) {
		t.Errorf(`"type" part: %s`, body)
	}
	// An oversized /mcp body: JSON 413 pointing at /uploads.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader("{}"))
	req.ContentLength = svc.cfg.MaxUploadBytes * 2
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "/uploads") || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
			t.Errorf("oversized /mcp body = %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
	// PROPFIND on /files/ is a wrong method.
	req, _ = http.NewRequest("PROPFIND", srv.URL+"/files/", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PROPFIND /files/: %v %v, want 405", resp.StatusCode, err)
	}
}
