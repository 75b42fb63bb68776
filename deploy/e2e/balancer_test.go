//go:build e2e

package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/procgroup"
)

// TestComposeScaleBalancer checks the scale-out deployment as an operator
// runs it, through its HAProxy balancer on HTTPS with a certificate from a
// local CA: /readyz answers through it and plain HTTP only redirects; a
// stateless tools/call through it hands out a download URL under the
// balancer's HTTPS address; an A2A task created through it is found by
// tasks/get on every one of ten tries (whichever replica answers); a tus
// upload in eight PATCHes through it completes (its PATCHes stick to the
// replica holding it); with
// one composer replica stopped, twenty downloads through it all succeed; and
// the load test (internal/cmd/scaleload) runs through it while a replica is
// stopped and started again, with no failed or corrupt download.
// E2E_LOAD_DURATION sets the load test's length (default 20s).
func TestComposeScaleBalancer(t *testing.T) {
	// Downloads are checked against the copy the answer embeds.
	s := startScale(t, "65536")
	hc := &http.Client{Timeout: time.Minute} // trusts the local CA (startScale)

	// 1. Health through the balancer; plain HTTP is only a redirect.
	if code, body := get(t, hc, s.lbURL+"/readyz"); code != http.StatusOK {
		t.Fatalf("GET %s/readyz through the balancer: %d %s", s.lbURL, code, body)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(s.lbHTTPURL + "/readyz?x=1")
	must(t, err, "GET the balancer's plain HTTP port")
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 != 3 || loc != s.lbURL+"/readyz?x=1" {
		t.Errorf("plain HTTP answered %s, Location %q; want a redirect to %s/readyz?x=1", resp.Status, loc, s.lbURL)
	}

	// 2. A stateless tools/call through the balancer: the URL it hands out is
	// the balancer's, and downloads through it.
	out := rpc(t, hc, s.lbURL+"/mcp", "tools/call", map[string]any{"name": "compose_document",
		"arguments": map[string]any{"markdown": "# Through the balancer\n\nHello", "format": "md", "filename": "lb.md"}})
	var call struct {
		Structured struct {
			URL string `json:"download_url"`
		} `json:"structuredContent"`
	}
	must(t, json.Unmarshal(out, &call), "decode the tools/call result")
	if !strings.HasPrefix(call.Structured.URL, s.lbURL+"/files/") {
		t.Fatalf("the download URL %q is not under %s/files/", redact(call.Structured.URL), s.lbURL)
	}
	code, doc := get(t, hc, call.Structured.URL)
	if code != http.StatusOK || !strings.Contains(doc, "Through the balancer") {
		t.Fatalf("download through the balancer: %d, %q", code, doc)
	}

	// The replicas believe X-Forwarded-For from the balancer only: a client's
	// forged entry is a claim, the address the balancer saw is the client.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, call.Structured.URL, nil)
	req.Header.Set("X-Forwarded-For", "6.6.6.6")
	resp, err = hc.Do(req)
	must(t, err, "download with a forged X-Forwarded-For")
	resp.Body.Close()
	lbIP := strings.TrimSpace(run(t, nil, "docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", s.containerID(t, "lb")))
	clients := map[string]bool{}
	for _, r := range s.replicas {
		for _, line := range strings.Split(run(t, nil, "docker", "logs", r.id), "\n") {
			if m := regexp.MustCompile(`client=(\S+) method=GET path=/files/`).FindStringSubmatch(line); m != nil {
				clients[m[1]] = true
			}
		}
	}
	if len(clients) == 0 || clients["6.6.6.6"] || clients[lbIP] {
		t.Errorf("the replicas logged downloads from %v; want the address the balancer (%s) saw, never 6.6.6.6 nor the balancer", clients, lbIP)
	}

	// 3. An A2A task created through the balancer is found on every try.
	out = rpc(t, hc, s.lbURL+"/a2a", "message/send", map[string]any{
		"message": map[string]any{"kind": "message", "messageId": "m-" + randomHex(t, 8), "role": "user",
			"parts": []any{map[string]any{"kind": "data", "data": map[string]any{"skill": "compose_document",
				"arguments": map[string]any{"markdown": "# A2A\n\nthrough the balancer", "format": "md"}}}}},
		"configuration": map[string]any{"blocking": true},
	})
	var task struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	must(t, json.Unmarshal(out, &task), "decode the A2A task")
	if task.ID == "" || task.Status.State != "completed" {
		t.Fatalf("message/send through the balancer answered %s", out)
	}
	for i := range 10 {
		out := rpc(t, hc, s.lbURL+"/a2a", "tasks/get", map[string]any{"id": task.ID})
		var got struct {
			ID     string                 `json:"id"`
			Status struct{ State string } `json:"status"`
		}
		if err := json.Unmarshal(out, &got); err != nil || got.ID != task.ID || got.Status.State != "completed" {
			t.Errorf("tasks/get try %d through the balancer: %s", i+1, out)
		}
	}

	// 3b. A tus upload through the balancer in eight PATCHes: its unfinished
	// bytes lie on the replica that created it, and the balancer's stick
	// table sends each PATCH and HEAD back there (round-robin would send
	// half of them elsewhere); the File-Url downloads the same bytes.
	tusThroughBalancer(t, hc, s.lbURL)

	// 4. One replica stopped: twenty downloads through the balancer succeed.
	s.stopReplica(t, 0)
	for i := range 20 {
		if code, body := get(t, hc, call.Structured.URL); code != http.StatusOK || body != doc {
			t.Errorf("download %d with replica A stopped: %d, %d bytes", i+1, code, len(body))
		}
	}
	s.startReplica(t, 0)

	// 5. The load test through the balancer while replica B is stopped and
	// started again.
	duration := 20 * time.Second
	if v := os.Getenv("E2E_LOAD_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		must(t, err, "E2E_LOAD_DURATION")
		duration = d
	}
	bin := filepath.Join(t.TempDir(), "scaleload")
	run(t, nil, "go", "build", "-o", bin, filepath.Join(s.root, "internal", "cmd", "scaleload"))
	load := exec.CommandContext(t.Context(), bin, "-url", s.lbURL, "-cacert", filepath.Join(s.tlsDir, "ca.pem"),
		"-clients", "4", "-duration", duration.String())
	var loadOut bytes.Buffer
	load.Stdout, load.Stderr = &loadOut, &loadOut
	_, err = procgroup.Start(t, load)
	must(t, err, "start the load test")
	time.Sleep(duration / 4)
	s.stopReplica(t, 1)
	time.Sleep(duration / 4)
	run(t, nil, "docker", "start", s.replicas[1].id)
	err = load.Wait()
	t.Logf("load test through the balancer, replica B stopped and started during it:\n%s", loadOut.String())
	if err != nil {
		t.Errorf("the load test failed: %v", err)
	}
}

// tusThroughBalancer uploads 1 MiB with tus in eight PATCHes through the
// balancer at lbURL, asking the offset with HEAD before each, and
// downloads the File-Url.
func tusThroughBalancer(t *testing.T, hc *http.Client, lbURL string) {
	t.Helper()
	data := bytes.Repeat([]byte("tus through the balancer\n"), 42000)[:1<<20]
	tus := func(method, url string, body []byte, header ...string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
		req.Header.Set("Tus-Resumable", "1.0.0")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := hc.Do(req)
		must(t, err, "%s %s", method, url)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := tus(http.MethodPost, lbURL+"/uploads/tus/", nil, "Upload-Length", strconv.Itoa(len(data)),
		"Upload-Metadata", "filename "+base64.StdEncoding.EncodeToString([]byte("tus-lb.txt")))
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(loc, lbURL+"/uploads/tus/") {
		t.Fatalf("tus creation through the balancer: %s, Location %q", resp.Status, loc)
	}
	const parts = 8
	fileURL := ""
	for i := range parts {
		head := tus(http.MethodHead, loc, nil)
		if want := strconv.Itoa(i * len(data) / parts); head.StatusCode != http.StatusOK || head.Header.Get("Upload-Offset") != want {
			t.Fatalf("HEAD before part %d: %s, offset %q, want %s (another replica answered?)", i+1, head.Status, head.Header.Get("Upload-Offset"), want)
		}
		from, to := i*len(data)/parts, (i+1)*len(data)/parts
		patch := tus(http.MethodPatch, loc, data[from:to], "Upload-Offset", strconv.Itoa(from), "Content-Type", "application/offset+octet-stream")
		if patch.StatusCode != http.StatusNoContent {
			t.Fatalf("PATCH %d of %d through the balancer: %s", i+1, parts, patch.Status)
		}
		fileURL = patch.Header.Get("File-Url")
	}
	if code, body := get(t, hc, fileURL); code != http.StatusOK || body != string(data) {
		t.Errorf("File-Url of the tus upload through the balancer: %d, %d bytes, want %d", code, len(body), len(data))
	}
}

// get is the status and body of a GET of url.
func get(t *testing.T, hc *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", redact(url), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err, "read the answer of %s", redact(url))
	return resp.StatusCode, string(b)
}

// rpc POSTs one JSON-RPC request (stateless: no session) to url and returns
// its result; an error answer fails the test.
func rpc(t *testing.T, hc *http.Client, url, method string, params any) json.RawMessage {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	must(t, err, "marshal the request")
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", string(mcptest.Protocol))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s %s: %v", url, method, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	msg := raw
	for _, line := range strings.Split(string(raw), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			msg = []byte(data)
		}
	}
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &out); err != nil || out.Error != nil || out.Result == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s %s: %s: %s", url, method, resp.Status, raw)
	}
	return out.Result
}
