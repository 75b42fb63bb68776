package a2acall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentura/agentura/transfer"
)

// urlOf is srv's URL, parsed. The servers of a test differ by port only:
// on one machine, another port is another service, and another origin.
func urlOf(srv *httptest.Server) *url.URL {
	u, _ := url.Parse(srv.URL)
	return u
}

// A file URI on the agent's host may redirect; the redirect must meet the
// same rule as the URI, or the other agent reaches any host through this
// client.
func TestDownloadRefusesRedirectsElsewhere(t *testing.T) {
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("internal secret"))
	}))
	defer secret.Close()
	elsewhere := urlOf(secret).JoinPath("metadata").String()
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere, http.StatusFound)
	}))
	defer agent.Close()
	base := urlOf(agent)

	c := &Client{}
	dir := t.TempDir()
	_, err := c.download(context.Background(), http.DefaultClient, base, dir, "out.txt", "", base.JoinPath("files", "x").String(), "")
	if err == nil || !strings.Contains(err.Error(), "DownloadHosts") {
		t.Fatalf("a redirect from the agent to %s: err = %v, want a refusal naming DownloadHosts", elsewhere, err)
	}
	if got, _ := os.ReadDir(dir); len(got) != 0 {
		t.Errorf("files saved from the refused redirect: %v", got)
	}
}

// The agent's host is not the agent's origin: another port on it is another
// service.
func TestDownloadRefusesOtherPortsOfTheAgentsHost(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("another service"))
	}))
	defer other.Close()
	base := urlOf(httptest.NewServer(http.NotFoundHandler()))
	c := &Client{}
	uri := urlOf(other).JoinPath("x").String()
	_, err := c.download(context.Background(), http.DefaultClient, base, t.TempDir(), "out.txt", "", uri, "")
	if err == nil || !strings.Contains(err.Error(), "DownloadHosts") {
		t.Fatalf("a URI on another port of the agent's host: err = %v, want a refusal", err)
	}
	// A host:port in DownloadHosts lets it through.
	c.DownloadHosts = []string{urlOf(other).Host}
	if _, err := c.download(context.Background(), http.DefaultClient, base, t.TempDir(), "out.txt", "", uri, ""); err != nil {
		t.Errorf("with %v in DownloadHosts: %v", c.DownloadHosts, err)
	}
}

// The bearer token belongs to the agent: a redirect of its card (or of its
// endpoint) to another host must not carry it there.
func TestTokenStaysWithTheAgent(t *testing.T) {
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
	to := urlOf(foreign)
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to.JoinPath(r.URL.Path).String(), http.StatusTemporaryRedirect)
	}))
	defer agent.Close()

	c := &Client{Token: "s3cret-token", Dir: t.TempDir()}
	_, err := c.CallSkill(context.Background(), urlOf(agent).String(), "echo", nil)
	if err == nil {
		t.Fatal("CallSkill against an agent whose card is not found succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Errorf("the bearer token went to another host: %v", leaked)
	}
}

// Calls that share a Dir (a tool's WorkDir, several calls in a row) never
// overwrite each other's files: a taken name gets a distinct one.
func TestNeverOverwritesAFileInDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "report.pdf"), []byte("first call's"), 0o600)
	os.MkdirAll(filepath.Join(dir, "images"), 0o700)
	c := &Client{Dir: dir}
	lf, err := c.save(dir, "report.pdf", "application/pdf", strings.NewReader("second call's"))
	if err != nil {
		t.Fatal(err)
	}
	if got := readString(filepath.Join(dir, "report.pdf")); got != "first call's" {
		t.Errorf("report.pdf now holds %q: the earlier file was overwritten", got)
	}
	if lf.Name != "report (2).pdf" || readString(lf.Path) != "second call's" {
		t.Errorf("saved as %s (%s), want report (2).pdf", lf.Name, lf.Path)
	}
	// A name that is a folder there gets a distinct name too.
	lf, err = c.save(dir, "images", "", strings.NewReader("x"))
	if err != nil || lf.Name != "images (2)" {
		t.Errorf("a file named like a folder: %+v, %v", lf, err)
	}
}

func readString(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// A file whose bytes do not hash to the sha256 its artifact announced is
// refused, and nothing of it stays in the folder.
func TestDownloadRefusesADigestMismatch(t *testing.T) {
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("substituted content"))
	}))
	defer agent.Close()
	base := urlOf(agent)
	c := &Client{}
	dir := t.TempDir()
	uri := base.JoinPath("files", "x").String()
	want := "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae" // sha256("foo")
	_, err := c.download(context.Background(), http.DefaultClient, base, dir, "out.txt", "", uri, want)
	if !errors.Is(err, transfer.ErrDigestMismatch) {
		t.Fatalf("download with a wrong sha256: err = %v, want ErrDigestMismatch", err)
	}
	if got, _ := os.ReadDir(dir); len(got) != 0 {
		t.Errorf("files saved despite the mismatch: %v", got)
	}
	// The right digest passes.
	sum := sha256.Sum256([]byte("substituted content"))
	if f, err := c.download(context.Background(), http.DefaultClient, base, dir, "out.txt", "", uri, hex.EncodeToString(sum[:])); err != nil || f.Size != 19 {
		t.Errorf("download with the right sha256: %+v, %v", f, err)
	}
}
