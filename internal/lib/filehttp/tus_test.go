package filehttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/storetest"
	"github.com/agentura/agentura/internal/lib/quota"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transferclient"
)

// tusEnv is a file server with /uploads/tus/ whose public URL is front, so
// a test may put a proxy there; the owner is the X-Owner header.
type tusEnv struct {
	st   *fileserve.DiskStore
	srv  *Server
	tus  *Tus
	back *httptest.Server // the server itself
	url  string           // its public URL
	dir  string
}

func newTusEnv(t *testing.T, publicURL func(back string) string, modify func(*Config)) *tusEnv {
	t.Helper()
	env := &tusEnv{st: newTestStore(t)}
	var h http.Handler
	env.back = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(env.back.Close)
	env.url = env.back.URL
	if publicURL != nil {
		env.url = publicURL(env.back.URL)
	}
	cfg := Config{Store: env.st, Signer: newTestSigner(t, env.url, testSecret), PublicURL: env.url,
		Owner: func(r *http.Request) (string, error) {
			if o := r.Header.Get("X-Owner"); o != "" {
				return o, nil
			}
			return "", errors.New("no X-Owner")
		}}
	if modify != nil {
		modify(&cfg)
	}
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env.srv = srv
	env.dir = filepath.Join(env.st.Root(), "tus")
	if env.tus, err = srv.Tus(TusConfig{Dir: env.dir, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/files/", srv.ServeFile)
	mux.Handle(transfer.TusPath, env.tus)
	h = mux
	return env
}

func tusReq(t *testing.T, method, url, owner string, hdr map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	h := http.Header{"Tus-Resumable": {"1.0.0"}}
	if owner != "" {
		h.Set("X-Owner", owner)
	}
	for k, v := range hdr {
		h.Set(k, v)
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
		h.Set("Content-Type", "application/offset+octet-stream")
	}
	return do(t, method, url, h, r)
}

func tusCreate(t *testing.T, env *tusEnv, owner, name string, size int) string {
	t.Helper()
	resp, body := tusReq(t, "POST", env.back.URL+transfer.TusPath, owner, map[string]string{
		"Upload-Length":   strconv.Itoa(size),
		"Upload-Metadata": "filename " + base64.StdEncoding.EncodeToString([]byte(name)),
	}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %s %s", resp.Status, body)
	}
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, env.url+transfer.TusPath) {
		t.Fatalf("Location %q is not under %s", loc, env.url+transfer.TusPath)
	}
	if _, err := time.Parse(http.TimeFormat, resp.Header.Get("Upload-Expires")); err != nil {
		t.Errorf("Upload-Expires = %q: %v", resp.Header.Get("Upload-Expires"), err)
	}
	return env.back.URL + strings.TrimPrefix(loc, env.url)
}

func TestTusUpload(t *testing.T) {
	env := newTusEnv(t, nil, nil)
	content := storetest.Pattern(300_000)
	half := len(content) / 2
	loc := tusCreate(t, env, "alice", "big data.bin", len(content))

	resp, body := tusReq(t, "PATCH", loc, "alice", map[string]string{"Upload-Offset": "0"}, content[:half])
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Upload-Offset") != strconv.Itoa(half) || resp.Header.Get(transfer.HeaderFileURL) != "" {
		t.Fatalf("first PATCH: %s offset %q %s", resp.Status, resp.Header.Get("Upload-Offset"), body)
	}
	for _, other := range []string{"mallory"} {
		for _, m := range []string{"HEAD", "PATCH", "DELETE"} {
			resp, _ := tusReq(t, m, loc, other, map[string]string{"Upload-Offset": strconv.Itoa(half)}, content[half:half+10])
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s by another owner: %s, want 404", m, resp.Status)
			}
		}
	}
	if resp, _ := tusReq(t, "HEAD", loc, "", nil, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("HEAD without identity: %s, want 401", resp.Status)
	}
	resp, _ = tusReq(t, "HEAD", loc, "alice", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Upload-Offset") != strconv.Itoa(half) || resp.Header.Get("Upload-Length") != strconv.Itoa(len(content)) {
		t.Fatalf("HEAD: %s offset %q length %q", resp.Status, resp.Header.Get("Upload-Offset"), resp.Header.Get("Upload-Length"))
	}
	if resp, _ := tusReq(t, "PATCH", loc, "alice", map[string]string{"Upload-Offset": "0"}, content[:10]); resp.StatusCode != http.StatusConflict {
		t.Errorf("PATCH at a wrong offset: %s, want 409", resp.Status)
	}
	resp, body = tusReq(t, "PATCH", loc, "alice", map[string]string{"Upload-Offset": strconv.Itoa(half)}, content[half:])
	fileURL := resp.Header.Get(transfer.HeaderFileURL)
	if resp.StatusCode != http.StatusNoContent || fileURL == "" {
		t.Fatalf("completing PATCH: %s File-Url %q %s", resp.Status, fileURL, body)
	}
	if !strings.HasPrefix(fileURL, env.url+"/files/") || !strings.Contains(fileURL, "/big%20data.bin?token=") {
		t.Errorf("File-Url = %s", fileURL)
	}
	resp, got := do(t, "GET", fileURL, nil, nil)
	if resp.StatusCode != 200 || !bytes.Equal(got, content) {
		t.Fatalf("GET File-Url: %s, %d bytes", resp.Status, len(got))
	}
	// The URL is a staged file's, as POST /uploads hands out: a tool
	// input resolves it through OpenURL.
	obj, m, own, err := env.srv.OpenURL(bg, fileURL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	obj.Close()
	if !own || m.Area != fileserve.Staging || m.Owner != "alice" || m.Size != int64(len(content)) || m.Name != "big data.bin" {
		t.Errorf("staged file: %+v", m)
	}
	// A lost answer: HEAD and a repeated PATCH name the file again.
	resp, _ = tusReq(t, "HEAD", loc, "alice", nil, nil)
	if resp.Header.Get("Upload-Offset") != strconv.Itoa(len(content)) || resp.Header.Get(transfer.HeaderFileURL) == "" {
		t.Errorf("HEAD after completion: offset %q File-Url %q", resp.Header.Get("Upload-Offset"), resp.Header.Get(transfer.HeaderFileURL))
	}
	if left, _ := filepath.Glob(filepath.Join(env.dir, "*.part")); len(left) > 0 {
		t.Errorf("the finished upload left %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(env.st.Root(), "tmp", "*")); len(left) > 0 {
		t.Errorf("adopting left %v", left)
	}
}

func TestTusLimits(t *testing.T) {
	env := newTusEnv(t, nil, func(c *Config) { c.MaxUploadBytes = 1000 })
	resp, body := tusReq(t, "POST", env.back.URL+transfer.TusPath, "alice", map[string]string{
		"Upload-Length": "1001", "Upload-Metadata": "filename " + base64.StdEncoding.EncodeToString([]byte("x")),
	}, nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("Upload-Length over the cap: %s %s", resp.Status, body)
	}
	resp, body = tusReq(t, "POST", env.back.URL+transfer.TusPath, "alice", map[string]string{"Upload-Length": "10"}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "filename") {
		t.Errorf("no file name: %s %s", resp.Status, body)
	}
	loc := tusCreate(t, env, "alice", "x.bin", 10)
	resp, _ = tusReq(t, "PATCH", loc, "alice", map[string]string{"Upload-Offset": "0"}, make([]byte, 20))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("PATCH past Upload-Length: %s", resp.Status)
	}
	resp, _ = tusReq(t, "OPTIONS", env.back.URL+transfer.TusPath, "", nil, nil)
	if ext := resp.Header.Get("Tus-Extension"); !strings.Contains(ext, "creation") || !strings.Contains(ext, "termination") || !strings.Contains(ext, "expiration") {
		t.Errorf("Tus-Extension = %q", ext)
	}
	if resp.Header.Get("Tus-Max-Size") != "1000" {
		t.Errorf("Tus-Max-Size = %q", resp.Header.Get("Tus-Max-Size"))
	}
	for range maxUnfinishedUploads - 1 {
		tusCreate(t, env, "alice", "x.bin", 10)
	}
	resp, body = tusReq(t, "POST", env.back.URL+transfer.TusPath, "alice", map[string]string{
		"Upload-Length": "10", "Upload-Metadata": "filename " + base64.StdEncoding.EncodeToString([]byte("x")),
	}, nil)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("upload %d: %s %s, want 429", maxUnfinishedUploads+1, resp.Status, body)
	}
	tusCreate(t, env, "bob", "x.bin", 10) // another owner has his own budget
	if _, _, err := env.tus.Expire(bg, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	loc = tusCreate(t, env, "alice", "x.bin", 10)
	resp, _ = tusReq(t, "DELETE", loc, "alice", nil, nil)
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE: %s", resp.Status)
	}
	if resp, _ := tusReq(t, "HEAD", loc, "alice", nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("HEAD after DELETE: %s", resp.Status)
	}
	assertEmpty(t, env.st)
}

func TestTusExpiry(t *testing.T) {
	env := newTusEnv(t, nil, nil)
	loc := tusCreate(t, env, "alice", "x.bin", 100)
	if resp, _ := tusReq(t, "PATCH", loc, "alice", map[string]string{"Upload-Offset": "0"}, make([]byte, 40)); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PATCH: %s", resp.Status)
	}
	done := tusCreate(t, env, "alice", "done.bin", 5)
	if resp, _ := tusReq(t, "PATCH", done, "alice", map[string]string{"Upload-Offset": "0"}, []byte("hello")); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PATCH: %s", resp.Status)
	}
	files, bytes, err := env.tus.Expire(bg, time.Now().Add(-time.Minute))
	if err != nil || files != 0 {
		t.Fatalf("Expire of nothing old: %d files, %v", files, err)
	}
	// Past its TTL an upload is not found, even before the sweep.
	env.srv.now = func() time.Time { return time.Now().Add(time.Hour + time.Second) }
	if resp, _ := tusReq(t, "HEAD", loc, "alice", nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("HEAD of an expired upload: %s", resp.Status)
	}
	files, bytes, err = env.tus.Expire(bg, time.Now().Add(time.Minute))
	if err != nil || files != 1 || bytes != 40 {
		t.Errorf("Expire: %d files, %d bytes, %v; want 1, 40", files, bytes, err)
	}
	if left, _ := os.ReadDir(env.dir); len(left) > 0 {
		t.Errorf("after the sweep %s holds %d entries", env.dir, len(left))
	}
}

// cutProxy forwards TCP to back and cuts the first connection that carries
// a PATCH after it forwarded cutAfter bytes of it.
type cutProxy struct {
	ln       net.Listener
	back     string
	cutAfter int64
	cuts     atomic.Int32
	once     sync.Once
}

func newCutProxy(t *testing.T, back string, cutAfter int64) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, back: strings.TrimPrefix(back, "http://"), cutAfter: cutAfter}
	t.Cleanup(func() { ln.Close() })
	go p.serve()
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *cutProxy) pipe(c net.Conn) {
	defer c.Close()
	b, err := net.Dial("tcp", p.back)
	if err != nil {
		return
	}
	defer b.Close()
	go func() { io.Copy(c, b); c.Close() }()
	buf := make([]byte, 32<<10)
	var sent int64
	cutting := false
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if !cutting && bytes.Contains(buf[:n], []byte("PATCH ")) {
				p.once.Do(func() { cutting = true })
			}
			if cutting && sent+int64(n) > p.cutAfter {
				b.Write(buf[:p.cutAfter-sent])
				p.cuts.Add(1)
				return // drops both sides mid-PATCH
			}
			if cutting {
				sent += int64(n)
			}
			if _, err := b.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func TestTusResumesAfterCut(t *testing.T) {
	var proxy *cutProxy
	env := newTusEnv(t, func(back string) string {
		proxy = newCutProxy(t, back, 700_000)
		return "http://" + proxy.ln.Addr().String()
	}, nil)
	content := storetest.Pattern(2_000_000)
	var progress []int64
	client := &transferclient.Tus{
		Client:     &http.Client{Transport: ownerTransport("alice")},
		ChunkBytes: 1 << 20,
		Backoff:    10 * time.Millisecond,
		Progress:   func(done, total int64) { progress = append(progress, done) },
	}
	ctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	fileURL, err := client.Send(ctx, env.url+transfer.TusPath, "resumed.bin", bytes.NewReader(content), int64(len(content)))
	if err != nil {
		t.Fatal(err)
	}
	if proxy.cuts.Load() != 1 {
		t.Fatalf("the proxy cut %d connections, want 1", proxy.cuts.Load())
	}
	resp, got := do(t, "GET", fileURL, nil, nil)
	if resp.StatusCode != 200 || !bytes.Equal(got, content) {
		t.Fatalf("GET File-Url: %s, %d bytes of %d", resp.Status, len(got), len(content))
	}
	if len(progress) == 0 || progress[len(progress)-1] != int64(len(content)) {
		t.Errorf("progress = %v", progress)
	}
	// The resume went on from what the agent held, not from zero.
	resumedAt := int64(-1)
	for i := 1; i < len(progress); i++ {
		if progress[i] < progress[i-1] {
			t.Errorf("progress went back: %v", progress)
		}
		if progress[i-1] == 0 || progress[i]%(1<<20) != 0 && progress[i] != int64(len(content)) {
			resumedAt = progress[i]
		}
	}
	if resumedAt <= 0 {
		t.Errorf("no resume from a partial offset in progress %v", progress)
	}
}

// losingTransport is ownerTransport that, before the PATCH numbered lose,
// deletes the upload on the agent: what a client meets when the replica
// holding its upload went away, or the upload expired.
type losingTransport struct {
	owner   ownerTransport
	lose    int
	patches int
	deleted string
}

func (l *losingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPatch {
		l.patches++
		if l.patches == l.lose {
			del, _ := http.NewRequestWithContext(r.Context(), http.MethodDelete, r.URL.String(), nil)
			del.Header.Set("Tus-Resumable", "1.0.0")
			resp, err := l.owner.RoundTrip(del)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				return nil, fmt.Errorf("DELETE %s: %s", r.URL, resp.Status)
			}
			l.deleted = r.URL.String()
		}
	}
	return l.owner.RoundTrip(r)
}

// An upload the agent no longer knows (404) is started over: the file
// arrives whole under a new upload.
func TestTusStartsOverWhenGone(t *testing.T) {
	env := newTusEnv(t, nil, nil)
	content := storetest.Pattern(3_000_000)
	lost := &losingTransport{owner: "alice", lose: 2}
	var progress []int64
	client := &transferclient.Tus{
		Client:     &http.Client{Transport: lost},
		ChunkBytes: 1 << 20,
		Backoff:    10 * time.Millisecond,
		Progress:   func(done, total int64) { progress = append(progress, done) },
	}
	fileURL, err := client.Send(bg, env.url+transfer.TusPath, "again.bin", bytes.NewReader(content), int64(len(content)))
	if err != nil {
		t.Fatal(err)
	}
	if lost.deleted == "" || strings.Contains(fileURL, lost.deleted) {
		t.Fatalf("the upload was not lost midway (deleted %q)", lost.deleted)
	}
	resp, got := do(t, "GET", fileURL, nil, nil)
	if resp.StatusCode != 200 || !bytes.Equal(got, content) {
		t.Fatalf("GET File-Url: %s, %d bytes of %d", resp.Status, len(got), len(content))
	}
	if want := []int64{1 << 20, 0, 1 << 20, 2 << 20, 3_000_000}; !slices.Equal(progress, want) {
		t.Errorf("progress = %v, want %v (the restart from 0 shown)", progress, want)
	}

	// Lost on every try: it gives up, saying why.
	always := &losingTransport{owner: "alice", lose: 1}
	client.Client = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPatch {
			always.patches = 0
		}
		return always.RoundTrip(r)
	})}
	if _, err := client.Send(bg, env.url+transfer.TusPath, "never.bin", bytes.NewReader(content), int64(len(content))); err == nil ||
		!strings.Contains(err.Error(), "404") {
		t.Errorf("an upload lost on every try: %v, want a 404 error", err)
	}
}

// roundTripFunc is a function as an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// ownerTransport names the owner on every request, as a bearer would.
type ownerTransport string

func (o ownerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Owner", string(o))
	return http.DefaultTransport.RoundTrip(r)
}

// failingAdopt is a store whose Adopt fails while down is set, as an S3
// store does during an outage.
type failingAdopt struct {
	fileserve.Store
	down *atomic.Bool
}

func (f failingAdopt) Adopt(ctx context.Context, nf fileserve.NewFile, path string) (fileserve.Meta, error) {
	if f.down.Load() {
		return fileserve.Meta{}, errors.New("s3store: put s3://bucket/staging/x: connection refused")
	}
	return f.Store.Adopt(ctx, nf, path)
}

// An upload complete while the store is down is kept: the completing PATCH
// answers a retryable 503, HEAD asks for the last byte, and once the store
// is back the PATCH that sends it stores the upload whole. Nothing is lost.
func TestTusFinishFailsThenResumes(t *testing.T) {
	down := &atomic.Bool{}
	down.Store(true)
	env := newTusEnv(t, nil, func(c *Config) { c.Store = failingAdopt{Store: c.Store, down: down} })
	content := storetest.Pattern(5000)
	loc := tusCreate(t, env, "alice", "x.bin", len(content))
	resp, body := tusReq(t, "PATCH", loc, "alice", map[string]string{"Upload-Offset": "0"}, content)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || resp.Header.Get(transfer.HeaderFileURL) != "" || !strings.Contains(string(body), "kept") {
		t.Errorf("completing PATCH into a failing store: %s %s", resp.Status, body)
	}
	if strings.Contains(string(body), "connection refused") || strings.Contains(string(body), env.dir) {
		t.Errorf("the answer shows the store's error: %s", body)
	}
	resp, _ = tusReq(t, "HEAD", loc, "alice", nil, nil)
	last := strconv.Itoa(len(content) - 1)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Upload-Offset") != last {
		t.Fatalf("HEAD after the failed finish: %s offset %q, want 200 and %s", resp.Status, resp.Header.Get("Upload-Offset"), last)
	}
	// Still down: the retry keeps it too.
	resp, _ = tusReq(t, "PATCH", loc, "alice", map[string]string{"Upload-Offset": last}, content[len(content)-1:])
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("retry while the store is down: %s", resp.Status)
	}
	down.Store(false)
	resp, body = tusReq(t, "PATCH", loc, "alice", map[string]string{"Upload-Offset": last}, content[len(content)-1:])
	fileURL := resp.Header.Get(transfer.HeaderFileURL)
	if resp.StatusCode != http.StatusNoContent || fileURL == "" {
		t.Fatalf("retry once the store is back: %s %s", resp.Status, body)
	}
	if resp, got := do(t, "GET", fileURL, nil, nil); resp.StatusCode != 200 || !bytes.Equal(got, content) {
		t.Fatalf("GET File-Url: %s, %d bytes", resp.Status, len(got))
	}

	// The Go client rides the outage out on its own.
	down.Store(true)
	go func() { time.Sleep(1500 * time.Millisecond); down.Store(false) }()
	tc := &transferclient.Tus{Client: &http.Client{Transport: ownerTransport("alice")}, Backoff: 200 * time.Millisecond, Retries: 8}
	u, err := tc.Send(bg, env.back.URL+transfer.TusPath, "y.bin", bytes.NewReader(content), int64(len(content)))
	if err != nil {
		t.Fatalf("transferclient.Tus through the outage: %v", err)
	}
	if resp, got := do(t, "GET", u, nil, nil); resp.StatusCode != 200 || !bytes.Equal(got, content) {
		t.Fatalf("GET of the client's upload: %s, %d bytes", resp.Status, len(got))
	}
}

// An upload that can never be stored (over the size cap the store
// enforces) is gone: the client learns it, nothing is left behind.
func TestTusFinishRefused(t *testing.T) {
	env := newTusEnv(t, nil, func(c *Config) { c.Store = tooLargeAdopt{c.Store} })
	loc := tusCreate(t, env, "alice", "x.bin", 5)
	resp, body := tusReq(t, "PATCH", loc, "alice", map[string]string{"Upload-Offset": "0"}, []byte("hello"))
	if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get(transfer.HeaderFileURL) != "" {
		t.Errorf("completing PATCH refused by the store: %s %s", resp.Status, body)
	}
	if resp, _ := tusReq(t, "HEAD", loc, "alice", nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("HEAD after the refused finish: %s, want 404", resp.Status)
	}
	if left, _ := filepath.Glob(filepath.Join(env.dir, "*", "*")); len(left) > 0 {
		t.Errorf("the refused upload left %v", left)
	}
}

// tooLargeAdopt is a store whose Adopt refuses every file as too large.
type tooLargeAdopt struct{ fileserve.Store }

func (tooLargeAdopt) Adopt(context.Context, fileserve.NewFile, string) (fileserve.Meta, error) {
	return fileserve.Meta{}, fmt.Errorf("adopt: %w", fileserve.ErrTooLarge)
}

// Upload-Metadata is capped; the record keeps only the name.
func TestTusMetadataCapped(t *testing.T) {
	env := newTusEnv(t, nil, nil)
	big := "filename " + base64.StdEncoding.EncodeToString([]byte("x.bin")) + ",junk " + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("j"), 700_000))
	resp, body := tusReq(t, "POST", env.back.URL+transfer.TusPath, "alice", map[string]string{"Upload-Length": "1", "Upload-Metadata": big}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Upload-Metadata") {
		t.Errorf("a 0.9 MB Upload-Metadata: %s %s; want 400 naming the header", resp.Status, body)
	}
	fit := "filename " + base64.StdEncoding.EncodeToString([]byte("x.bin")) + ",junk " + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("j"), 5000))
	resp, body = tusReq(t, "POST", env.back.URL+transfer.TusPath, "alice", map[string]string{"Upload-Length": "1", "Upload-Metadata": fit}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("metadata under the cap: %s %s", resp.Status, body)
	}
	records, _ := filepath.Glob(filepath.Join(env.dir, fileserve.OwnerKey("alice"), "*.json"))
	if len(records) != 1 {
		t.Fatalf("records of alice: %v", records)
	}
	if b, _ := os.ReadFile(records[0]); len(b) > tusRecordCharge || bytes.Contains(b, []byte("jjjj")) {
		t.Errorf("the record keeps more than the name (%d bytes): %.200s", len(b), b)
	}
}

// With a quota, an upload reserves its Upload-Length when it is created
// (its record counts once it is finished): unfinished uploads cannot hold more than the
// quota. The reservation ends with DELETE and with expiry, and the staged
// file draws on it.
func TestTusReservesQuota(t *testing.T) {
	var q *quota.Store
	env := newTusEnv(t, nil, func(c *Config) {
		var err error
		if q, err = quota.New(c.Store, quota.Config{Limit: 100_000}); err != nil {
			t.Fatal(err)
		}
		c.Store = q
	})
	create := func(size int) (*http.Response, []byte) {
		return tusReq(t, "POST", env.back.URL+transfer.TusPath, "alice", map[string]string{
			"Upload-Length": strconv.Itoa(size), "Upload-Metadata": "filename " + base64.StdEncoding.EncodeToString([]byte("x.bin")),
		}, nil)
	}
	first := tusCreate(t, env, "alice", "a.bin", 60_000)
	if resp, body := create(60_000); resp.StatusCode != http.StatusInsufficientStorage || !strings.Contains(string(body), "quota") {
		t.Fatalf("a second upload over the quota: %s %s; want 507", resp.Status, body)
	}
	if resp, _ := tusReq(t, "DELETE", first, "alice", nil, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %s", resp.Status)
	}
	if used, _ := q.Used(bg, "alice"); used != 0 {
		t.Errorf("after DELETE alice uses %d, want 0", used)
	}
	content := storetest.Pattern(60_000)
	loc := tusCreate(t, env, "alice", "b.bin", len(content))
	resp, body := tusReq(t, "PATCH", loc, "alice", map[string]string{"Upload-Offset": "0"}, content)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("completing PATCH within the reservation: %s %s", resp.Status, body)
	}
	if used, _ := q.Used(bg, "alice"); used != int64(len(content))+tusRecordCharge {
		t.Errorf("after the upload alice uses %d, want the file and the record's charge, %d", used, len(content)+tusRecordCharge)
	}
	// A process started on the same folder counts the records it finds.
	q2, _ := quota.New(env.st, quota.Config{Limit: 100_000})
	srv2, _ := NewServer(Config{Store: q2, Signer: env.srv.signer, PublicURL: env.url})
	tus2, err := srv2.Tus(TusConfig{Dir: env.dir, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if used, _ := q2.Used(bg, "alice"); used != int64(len(content))+tusRecordCharge {
		t.Errorf("a restarted process counts %d for alice, want %d", used, len(content)+tusRecordCharge)
	}
	if _, _, err := tus2.Expire(bg, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if used, _ := q2.Used(bg, "alice"); used != int64(len(content)) {
		t.Errorf("after expiry alice uses %d, want the staged file alone, %d", used, len(content))
	}
}
