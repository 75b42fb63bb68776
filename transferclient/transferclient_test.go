package transferclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// hostAs returns srv's URL with its host written as host ("localhost" or
// "127.0.0.1").
func hostAs(t *testing.T, srv *httptest.Server, host string) *url.URL {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = host + ":" + u.Port()
	return u
}

// The token goes with every request to the origin, a redirect on it
// included, and with none elsewhere: not to another port of the same host,
// and not when the caller set it by hand.
func TestBearerGoesToTheOriginOnly(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	note := func(who string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[who+" "+r.URL.Path] = r.Header.Get("Authorization")
			mu.Unlock()
		}
	}
	other := httptest.NewServer(note("other"))
	defer other.Close()
	var agentURL *url.URL
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/here":
			http.Redirect(w, r, agentURL.JoinPath("landed").String(), http.StatusFound)
		case "/away":
			http.Redirect(w, r, hostAs(t, other, "127.0.0.1").JoinPath("stolen").String(), http.StatusFound)
		default:
			note("agent")(w, r)
		}
	}))
	defer agent.Close()
	agentURL = hostAs(t, agent, "localhost") // reached as localhost, serving on 127.0.0.1: one origin
	hc := WithBearer(nil, "tok", agentURL)

	for _, u := range []string{agentURL.JoinPath("direct").String(), hostAs(t, agent, "127.0.0.1").JoinPath("alias").String(),
		agentURL.JoinPath("here").String(), agentURL.JoinPath("away").String(), hostAs(t, other, "localhost").JoinPath("direct").String()} {
		resp, err := hc.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// A token the caller put on a request for elsewhere is taken off.
	req, _ := http.NewRequest(http.MethodGet, other.URL+"/byhand", nil)
	req.Header.Set("Authorization", "Bearer tok")
	if resp, err := hc.Do(req); err == nil {
		resp.Body.Close()
	}
	want := map[string]string{
		"agent /direct": "Bearer tok", "agent /alias": "Bearer tok", "agent /landed": "Bearer tok",
		"other /stolen": "", "other /direct": "", "other /byhand": "",
	}
	mu.Lock()
	defer mu.Unlock()
	for k, v := range want {
		if got, ok := seen[k]; !ok || got != v {
			t.Errorf("%s: Authorization %q (seen %v), want %q", k, got, ok, v)
		}
	}
	if WithBearer(nil, "", agentURL).Transport != nil {
		t.Error("WithBearer without a token wraps the transport")
	}
}

func TestGuardedGet(t *testing.T) {
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) }))
	defer foreign.Close()
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/small":
			w.Write([]byte("0123456789"))
		case "/big":
			w.Header().Set("Content-Length", "100")
			w.Write(make([]byte, 100))
		case "/stream": // no Content-Length: the cap holds on the stream
			w.(http.Flusher).Flush()
			w.Write(make([]byte, 100))
		case "/away":
			http.Redirect(w, r, foreign.URL+"/x?token=foreign-token", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error": "no such file"}`))
		}
	}))
	defer agent.Close()
	base, _ := url.Parse(agent.URL)
	g := Guard{Origin: base, AllowSetting: "the test's AllowHosts"}
	ctx := context.Background()
	get := func(path string, max int64) (string, error) {
		resp, err := g.Get(ctx, http.DefaultClient, agent.URL+path+"?token=secret-token", max)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if got, err := get("/small", 10); err != nil || got != "0123456789" {
		t.Errorf("10 bytes under a cap of 10: %q, %v", got, err)
	}
	if _, err := get("/big", 99); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "100 bytes, over the cap of 99") {
		t.Errorf("Content-Length over the cap: %v", err)
	}
	if _, err := get("/stream", 99); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a stream over the cap: %v", err)
	}
	_, err := get("/away", 99)
	if !errors.Is(err, ErrForeignURL) || !strings.Contains(err.Error(), "redirect") || !strings.Contains(err.Error(), "the test's AllowHosts") ||
		strings.Contains(err.Error(), "foreign-token") {
		t.Errorf("redirect to a foreign host: %v (want a refusal without the redirect's query)", err)
	}
	if _, err := get("/loop", 99); err == nil || !strings.Contains(err.Error(), "stopped after 5 redirects") {
		t.Errorf("redirect loop: %v", err)
	}
	_, err = get("/nope", 99)
	if err == nil || !strings.Contains(err.Error(), "404 Not Found: no such file") || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("404: %v (want the agent's reason, no token)", err)
	}
	if _, err := g.Get(ctx, http.DefaultClient, foreign.URL+"/x", 99); !errors.Is(err, ErrForeignURL) {
		t.Errorf("a foreign URL: %v", err)
	}
	if _, err := g.Get(ctx, http.DefaultClient, "file:///etc/passwd", 99); err == nil || errors.Is(err, ErrForeignURL) {
		t.Errorf("a file URL: %v, want 'not an http(s) URL'", err)
	}
	allowed := Guard{AllowHosts: []string{strings.TrimPrefix(foreign.URL, "http://")}}
	if resp, err := allowed.Get(ctx, http.DefaultClient, foreign.URL+"/x", 99); err != nil {
		t.Errorf("an allowed host: %v", err)
	} else {
		resp.Body.Close()
	}
	if _, err := (Guard{OriginSetting: "BaseURL"}).Get(ctx, http.DefaultClient, agent.URL+"/small", 99); err == nil || !strings.Contains(err.Error(), "origin is unknown — set BaseURL") {
		t.Errorf("no origin: %v", err)
	}
}

func TestSaveNeverClobbers(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "report.pdf"), []byte("first"), 0o600)
	os.MkdirAll(filepath.Join(dir, "images"), 0o700)
	s, err := Save(dir, "report.pdf", strings.NewReader("second"), 0, 0o644)
	if err != nil || s.Name != "report (2).pdf" || s.Size != 6 {
		t.Fatalf("Save over a taken name: %+v, %v", s, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "report.pdf")); string(b) != "first" {
		t.Errorf("report.pdf now holds %q", b)
	}
	if st, _ := os.Stat(s.Path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if s, err := Save(dir, "images", strings.NewReader("x"), 0, 0); err != nil || s.Name != "images (2)" {
		t.Errorf("a name taken by a folder: %+v, %v", s, err)
	}
	if s, err := Save(dir, "../../etc/sub/chart.png", strings.NewReader("png"), 0, 0); err != nil || s.Name != "etc/sub/chart.png" || !strings.HasPrefix(s.Path, dir) {
		t.Errorf("a climbing name: %+v, %v", s, err)
	}
	if _, err := Save(dir, "big.bin", strings.NewReader("12345"), 4, 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the cap: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "big.bin")); err == nil {
		t.Error("a file over the cap was saved")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".part-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestSaveStaysInDir (E19): a symbolic link inside the folder, as a folder
// of the sub-path or as the name itself, never leads the saved file out of
// it: the gateway followed one in --out and wrote outside.
func TestSaveStaysInDir(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, "images")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "report.pdf"), filepath.Join(dir, "report.pdf")); err != nil {
		t.Fatal(err)
	}
	_, err := Save(dir, "images/chart.png", strings.NewReader("png"), 0, 0o644)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("saving through a link out of the folder: %v, want a refusal naming the symbolic link", err)
	}
	saved, err := Save(dir, "report.pdf", strings.NewReader("pdf"), 0, 0o644)
	if err != nil || saved.Name != "report (2).pdf" {
		t.Errorf("saving over a dangling link: %+v, %v, want report (2).pdf beside it", saved, err)
	}
	entries, _ := os.ReadDir(elsewhere)
	for _, e := range entries {
		t.Errorf("%s was written outside the folder", e.Name())
	}
}

// A folder named for the first time (agentura call --out results) is made,
// as it was before saves went through an os.Root.
func TestSaveMakesItsFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results", "today")
	saved, err := Save(dir, "page.md", strings.NewReader("# hi"), 0, 0o644)
	if err != nil {
		t.Fatalf("save into a folder not made yet: %v", err)
	}
	if b, err := os.ReadFile(saved.Path); err != nil || string(b) != "# hi" {
		t.Errorf("%s: %q %v", saved.Path, b, err)
	}
}

// Guard.Client applies the rule to every request, whatever its method and
// status: a request off the origin is never sent, a redirect off it never
// followed, and a client that follows no redirect still sees the redirect
// itself.
func TestGuardedClient(t *testing.T) {
	var mu sync.Mutex
	var reached []string
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.Method+" "+r.URL.Path)
		mu.Unlock()
	}))
	defer foreign.Close()
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, foreign.URL+"/x", http.StatusFound)
		case "/refused":
			w.WriteHeader(http.StatusForbidden)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer agent.Close()
	base, _ := url.Parse(agent.URL)
	hc := Guard{Origin: base, AllowSetting: "--allow-host"}.Client(nil)
	do := func(c *http.Client, method, u string) (int, error) {
		req, _ := http.NewRequest(method, u, strings.NewReader("body"))
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := do(hc, http.MethodGet, agent.URL+"/refused"); err != nil || code != http.StatusForbidden {
		t.Errorf("a 403 on the origin: %d, %v (want the answer itself)", code, err)
	}
	if code, err := do(hc, http.MethodPut, agent.URL+"/put"); err != nil || code != http.StatusNoContent {
		t.Errorf("a PUT on the origin: %d, %v", code, err)
	}
	if _, err := do(hc, http.MethodPut, foreign.URL+"/put"); !errors.Is(err, ErrForeignURL) || !strings.Contains(err.Error(), "--allow-host") {
		t.Errorf("a PUT elsewhere: %v", err)
	}
	if _, err := do(hc, http.MethodGet, agent.URL+"/away"); !errors.Is(err, ErrForeignURL) || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("a redirect elsewhere: %v", err)
	}
	stop := Guard{Origin: base}.Client(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }})
	if code, err := do(stop, http.MethodGet, agent.URL+"/away"); err != nil || code != http.StatusFound {
		t.Errorf("a client that follows no redirect: %d, %v (want the 302 itself)", code, err)
	}
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reached)
	}
	if got := seen(); len(got) > 0 {
		t.Errorf("the foreign host was reached: %v", got)
	}
	allowed := Guard{Origin: base, AllowHosts: []string{strings.TrimPrefix(foreign.URL, "http://")}}.Client(nil)
	if code, err := do(allowed, http.MethodGet, agent.URL+"/away"); err != nil || code != http.StatusOK || len(seen()) != 1 {
		t.Errorf("a redirect to an allowed host: %d, %v, reached %v", code, err, seen())
	}
}
