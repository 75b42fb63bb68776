package agentcore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// loopbackAs returns srv's URL with its host written as host ("localhost"
// or "127.0.0.1"): two names of one machine that an origin check must tell
// apart, as it would two hosts.
func loopbackAs(t *testing.T, srv *httptest.Server, host string) *url.URL {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = host + ":" + u.Port()
	return u
}

// A file URI on the agent's host may redirect; the redirect must meet the
// same rule as the URI, or the other agent reaches any host through this
// client.
func TestA2AClientDownloadRefusesRedirectsElsewhere(t *testing.T) {
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("internal secret"))
	}))
	defer secret.Close()
	elsewhere := loopbackAs(t, secret, "localhost").JoinPath("metadata").String()
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere, http.StatusFound)
	}))
	defer agent.Close()
	base := loopbackAs(t, agent, "127.0.0.1")

	c := &A2AClient{}
	dir := t.TempDir()
	_, err := c.download(context.Background(), c.plainClient(), base, dir, "out.txt", "", base.JoinPath("files", "x").String(), map[string]bool{})
	if err == nil || !strings.Contains(err.Error(), "DownloadHosts") {
		t.Fatalf("a redirect from the agent to %s: err = %v, want a refusal naming DownloadHosts", elsewhere, err)
	}
	if got := filesIn(t, dir); len(got) != 0 {
		t.Errorf("files saved from the refused redirect: %v", got)
	}
}

// The agent's host is not the agent's origin: another port on it is another
// service.
func TestA2AClientDownloadRefusesOtherPortsOfTheAgentsHost(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("another service"))
	}))
	defer other.Close()
	base := loopbackAs(t, httptest.NewServer(http.NotFoundHandler()), "127.0.0.1")
	c := &A2AClient{}
	uri := loopbackAs(t, other, "127.0.0.1").JoinPath("x").String()
	_, err := c.download(context.Background(), c.plainClient(), base, t.TempDir(), "out.txt", "", uri, map[string]bool{})
	if err == nil || !strings.Contains(err.Error(), "DownloadHosts") {
		t.Fatalf("a URI on another port of the agent's host: err = %v, want a refusal", err)
	}
	// A host:port in DownloadHosts lets it through.
	c.DownloadHosts = []string{loopbackAs(t, other, "127.0.0.1").Host}
	if _, err := c.download(context.Background(), c.plainClient(), base, t.TempDir(), "out.txt", "", uri, map[string]bool{}); err != nil {
		t.Errorf("with %v in DownloadHosts: %v", c.DownloadHosts, err)
	}
}

// The bearer token belongs to the agent: a redirect of its card (or of its
// endpoint) to another host must not carry it there.
func TestA2AClientTokenStaysWithTheAgent(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if a := r.Header.Get("Authorization"); a != "" {
			leaked = append(leaked, r.URL.Path+": "+a)
		}
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer foreign.Close()
	to := loopbackAs(t, foreign, "localhost")
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to.JoinPath(r.URL.Path).String(), http.StatusTemporaryRedirect)
	}))
	defer agent.Close()

	c := &A2AClient{Token: "s3cret-token", Dir: t.TempDir()}
	_, err := c.CallSkill(context.Background(), loopbackAs(t, agent, "127.0.0.1").String(), "echo", nil)
	if err == nil {
		t.Fatal("CallSkill against an agent whose card is not found succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Errorf("the bearer token went to another host: %v", leaked)
	}
}

// With Dir empty each call gets its own temporary folder; the caller can
// only remove one it is told of, and a call that fails or brings back no
// file must leave none behind.
func TestA2AClientLeavesNoTemporaryFolders(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	svc, srv := serveTestService(t, nil)
	addEchoTool(svc)
	AddTool(svc, Tool{Name: "nothing", Description: "produces no file"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		return &Result{Text: "done"}, nil
	})
	in := filepath.Join(t.TempDir(), "note.txt")
	os.WriteFile(in, []byte("a note"), 0o600)
	c := &A2AClient{}

	res, err := c.CallSkill(context.Background(), srv.URL, "nothing", nil)
	if err != nil || res.Text != "done" {
		t.Fatalf("nothing: %+v, %v", res, err)
	}
	if left := tempFolders(t, tmp); len(left) != 0 {
		t.Errorf("a call without files left %v", left)
	}

	res, err = c.CallSkill(context.Background(), srv.URL, "echo", nil, in)
	if err != nil || len(res.Files) != 1 {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	if res.Dir == "" || filepath.Dir(res.Files[0].Path) != res.Dir {
		t.Fatalf("SkillResult.Dir = %q, want the folder of %s", res.Dir, res.Files[0].Path)
	}
	os.RemoveAll(res.Dir)

	c.MaxBytes = 2 // the echoed file is over it: the call fails while saving
	if _, err := c.CallSkill(context.Background(), srv.URL, "echo", nil, in); err == nil {
		t.Fatal("a file over MaxBytes was accepted")
	}
	if left := tempFolders(t, tmp); len(left) != 0 {
		t.Errorf("a failed call left %v", left)
	}
}

func tempFolders(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "a2a-files-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Calls that share a Dir (a tool's WorkDir, several calls in a row) never
// overwrite each other's files: a taken name gets a distinct one.
func TestA2AClientNeverOverwritesAFileInDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "report.pdf"), []byte("first call's"), 0o600)
	os.MkdirAll(filepath.Join(dir, "images"), 0o700)
	c := &A2AClient{Dir: dir}
	lf, err := c.save(dir, "report.pdf", "application/pdf", strings.NewReader("second call's"), map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, filepath.Join(dir, "report.pdf"))); got != "first call's" {
		t.Errorf("report.pdf now holds %q: the earlier file was overwritten", got)
	}
	if lf.Name != "report (2).pdf" || string(readFile(t, lf.Path)) != "second call's" {
		t.Errorf("saved as %s (%s), want report (2).pdf", lf.Name, lf.Path)
	}
	// A name that is a folder there gets a distinct name too.
	lf, err = c.save(dir, "images", "", strings.NewReader("x"), map[string]bool{})
	if err != nil || lf.Name != "images (2)" {
		t.Errorf("a file named like a folder: %+v, %v", lf, err)
	}
}
