package filehttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/signing"
	"github.com/agentura/agentura/transfer"
	"github.com/gin-gonic/gin"
)

func init() { gin.SetMode(gin.ReleaseMode) }

var bg = context.Background()

// testSecret is the signing secret of the tests.
var testSecret = []byte("0123456789abcdef0123456789abcdef")

func newTestStore(t testing.TB) *fileserve.DiskStore {
	t.Helper()
	st, err := fileserve.NewDiskStore(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func newTestSigner(t testing.TB, audience string, secret []byte, opts ...signing.Option) *signing.Signer {
	t.Helper()
	k, err := signing.NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	s, err := signing.NewSigner(audience, []signing.Key{k}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mounts are the two ways the service mounts the handlers: net/http's
// ServeMux, and gin as the agents do.
var mounts = []string{"mux", "gin"}

// testEnv is a store, a server and an HTTP server in front of it.
type testEnv struct {
	st     *fileserve.DiskStore
	srv    *Server
	ts     *httptest.Server
	signer *signing.Signer
}

// newTestEnv starts the handlers mounted as mount ("mux" or "gin"); modify
// may change the config before the server is made.
func newTestEnv(t testing.TB, mount string, modify func(*Config)) *testEnv {
	t.Helper()
	env := &testEnv{st: newTestStore(t)}
	var handler http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	env.ts = ts
	env.signer = newTestSigner(t, ts.URL, testSecret)
	cfg := Config{Store: env.st, Signer: env.signer, PublicURL: ts.URL}
	if modify != nil {
		modify(&cfg)
	}
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env.srv = srv
	switch mount {
	case "mux":
		mux := http.NewServeMux()
		mux.HandleFunc("/files/", srv.ServeFile)
		mux.HandleFunc("/uploads", srv.ServeUpload)
		handler = mux
	case "gin":
		e := gin.New()
		e.GET("/files/*path", gin.WrapF(srv.ServeFile))
		e.HEAD("/files/*path", gin.WrapF(srv.ServeFile))
		e.POST("/files/*path", gin.WrapF(srv.ServeFile))
		e.Any("/uploads", gin.WrapF(srv.ServeUpload))
		handler = e
	default:
		t.Fatalf("unknown mount %q", mount)
	}
	return env
}

// put stores content for owner in area.
func (env *testEnv) put(t testing.TB, area fileserve.Area, owner, name string, content []byte) fileserve.Meta {
	t.Helper()
	m, err := env.st.Put(context.Background(), fileserve.NewFile{Area: area, Owner: owner, Name: name}, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// signedURL is the download URL of m.
func (env *testEnv) signedURL(t testing.TB, m fileserve.Meta) string {
	t.Helper()
	u, err := env.srv.URL(m)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// do sends a request and returns the response with its body read.
func do(t testing.TB, method, url string, header http.Header, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// jsonError decodes an error body, failing unless it is JSON {"error": ...}.
func jsonError(t testing.TB, resp *http.Response, body []byte) string {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q, want application/json", ct)
	}
	var e transfer.Error
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("error body %q is not {\"error\": ...}: %v", body, err)
	}
	return e.Error
}

// assertEmpty fails if the store holds any file, or anything in its
// folder of writes in progress.
func assertEmpty(t testing.TB, st *fileserve.DiskStore) {
	t.Helper()
	for _, area := range []fileserve.Area{fileserve.Outputs, fileserve.Staging} {
		st.Walk(bg, area, func(m fileserve.Meta) error {
			t.Errorf("%s holds %s", area, m.Name)
			return nil
		})
	}
	if left, _ := filepath.Glob(filepath.Join(st.Root(), "tmp", "*")); len(left) > 0 {
		t.Errorf("writes in progress left %v", left)
	}
}

// within reports whether d lies within tolerance of want.
func within(d, want, tolerance time.Duration) bool {
	return d >= want-tolerance && d <= want+tolerance
}

// flip changes one character in the middle of segment seg of a JWT.
func flip(token string, seg int) string {
	parts := strings.Split(token, ".")
	p := []byte(parts[seg])
	i := len(p) / 2
	if p[i] == 'A' {
		p[i] = 'B'
	} else {
		p[i] = 'A'
	}
	parts[seg] = string(p)
	return strings.Join(parts, ".")
}
