//go:build e2e

package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"github.com/agentura/agentura/internal/testkit/procgroup"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestComposeNginx runs deploy/docker-compose.nginx.yml, brought up by the
// transcript of make up-nginx in docs/deployment.md: the composer agent
// on disk storage behind nginx, which sends the downloads the agent checked
// (X-Accel-Redirect). A file staged through nginx comes back through it
// byte-exact with the headers the agent sets; a tampered token is refused
// by the agent; the files' internal location is not reachable from outside;
// a URL past its expiry is refused.
func TestComposeNginx(t *testing.T) {
	requireDocker(t)
	root := repoRoot(t)
	compose := composeCommand(t)
	file := filepath.Join(root, "deploy", "docker-compose.nginx.yml")
	project := runProject("nginx")
	port := freePort(t)
	base := "http://localhost:" + strconv.Itoa(port)
	const urlTTL = 20 * time.Second
	settings := []string{"COMPOSE_PROJECT_NAME=" + project, "NGINX_PORT=" + strconv.Itoa(port), "NGINX_PUBLIC_URL=" + base,
		"AGENT_URL_TTL=" + urlTTL.String(), "AGENT_MCP_STATELESS=true"}
	env := append(os.Environ(), settings...)
	dc := func(args ...string) (string, error) {
		cmd := exec.Command(compose[0], append(append(append([]string{}, compose[1:]...), "-p", project, "-f", file), args...)...)
		cmd.Env = env
		out, err := procgroup.CombinedOutput(cmd)
		return string(out), err
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := dc("logs", "--no-color", "--tail", "40")
			t.Logf("compose logs:\n%s", out)
		}
		if out, err := dc("down", "--volumes", "--remove-orphans", "--timeout", "10"); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
	})
	// Up as docs/deployment.md shows it: make up-nginx and a GET of /readyz.
	runTranscript(t, "up-nginx", transcriptRun{
		root:    root,
		env:     append(settings, "NGINX_PROJECT="+project),
		subst:   [][2]string{{"localhost:8080", "localhost:" + strconv.Itoa(port)}},
		project: [2]string{"agenturanginx", project},
	})

	hc := &http.Client{Timeout: time.Minute}
	content := make([]byte, 3<<20+17)
	rand.Read(content)
	req, _ := http.NewRequest(http.MethodPost, base+"/uploads", bytes.NewReader(content))
	req.Header.Set("X-Filename", "report.html")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var staged struct {
		URL string `json:"url"`
	}
	json.NewDecoder(resp.Body).Decode(&staged)
	resp.Body.Close()
	stagedAt := time.Now()
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(staged.URL, base+"/files/") {
		t.Fatalf("POST /uploads through nginx: %d, url %q", resp.StatusCode, redact(staged.URL))
	}

	get := func(u string, hdr ...string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, got := get(staged.URL)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, content) {
		t.Fatalf("download through nginx: %d, %d bytes (want %d, byte-exact)", resp.StatusCode, len(got), len(content))
	}
	for k, want := range map[string]string{"Content-Disposition": `attachment; filename="report.html"`, "X-Content-Type-Options": "nosniff",
		"Content-Security-Policy": "sandbox", "Content-Type": "text/html", "Etag": `"`, "Cache-Control": "private, max-age=",
		"Content-Length": strconv.Itoa(len(content)), "Access-Control-Allow-Origin": "*"} {
		if !strings.Contains(resp.Header.Get(k), want) {
			t.Errorf("download through nginx: %s %q, want it to hold %q", k, resp.Header.Get(k), want)
		}
	}
	if v := resp.Header.Get("X-Accel-Redirect"); v != "" {
		t.Errorf("nginx passed X-Accel-Redirect %q on to the client", v)
	}
	etag := resp.Header.Get("Etag")
	if resp, _ := get(staged.URL, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match of the download's ETag: %d, want 304", resp.StatusCode)
	}
	if resp, part := get(staged.URL, "Range", "bytes=1000-1999"); resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, content[1000:2000]) {
		t.Errorf("Range through nginx: %d, %d bytes", resp.StatusCode, len(part))
	}

	u, token, _ := strings.Cut(staged.URL, "token=")
	tampered := []byte(token)
	if i := len(tampered) - 5; tampered[i] == 'A' {
		tampered[i] = 'B'
	} else {
		tampered[i] = 'A'
	}
	if resp, body := get(u + "token=" + string(tampered)); resp.StatusCode != http.StatusForbidden || bytes.Contains(body, content[:64]) {
		t.Errorf("tampered token: %d %.200q, want 403 from the agent", resp.StatusCode, body)
	}
	if resp, _ := get(base + "/internal-files/"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /internal-files/ from outside: %d, want 404 (internal location)", resp.StatusCode)
	}

	time.Sleep(time.Until(stagedAt.Add(urlTTL + 2*time.Second)))
	if resp, body := get(staged.URL); resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "expired") {
		t.Errorf("the URL past its expiry: %d %.200q, want 403 expired", resp.StatusCode, body)
	}
}
