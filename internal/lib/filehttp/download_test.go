package filehttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/fileserve/storetest"
	"github.com/agentura/agentura/signing"
	"github.com/prometheus/client_golang/prometheus"
)

func TestServeFile(t *testing.T) {
	for _, mount := range mounts {
		t.Run(mount, func(t *testing.T) {
			env := newTestEnv(t, mount, nil)
			content := append([]byte("%PDF-1.7\n"), storetest.Pattern(100_000)...)
			m := env.put(t, fileserve.Outputs, "alice", "reports/Bericht_ü.pdf", content)
			u := env.signedURL(t, m)
			if want := env.ts.URL + "/files/" + m.ID + "/reports/Bericht_%C3%BC.pdf?token="; !strings.HasPrefix(u, want) {
				t.Fatalf("URL %s does not start with %s", u, want)
			}

			resp, body := do(t, "GET", u, nil, nil)
			if resp.StatusCode != 200 || !bytes.Equal(body, content) {
				t.Fatalf("GET: %d, %d bytes", resp.StatusCode, len(body))
			}
			h := resp.Header
			for k, want := range map[string]string{
				"Content-Type":            "application/pdf",
				"Content-Length":          strconv.Itoa(len(content)),
				"Etag":                    `"` + m.SHA256 + `"`,
				"Last-Modified":           m.Created.UTC().Format(http.TimeFormat),
				"Content-Disposition":     `attachment; filename="Bericht__.pdf"; filename*=UTF-8''Bericht_%C3%BC.pdf`,
				"X-Content-Type-Options":  "nosniff",
				"Content-Security-Policy": "default-src 'none'; sandbox",
				"Referrer-Policy":         "no-referrer",
				"Accept-Ranges":           "bytes",
			} {
				if got := h.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			cc := h.Get("Cache-Control")
			age, err := strconv.Atoi(strings.TrimPrefix(cc, "private, max-age="))
			if err != nil || !within(time.Duration(age)*time.Second, time.Hour, 5*time.Second) {
				t.Errorf("Cache-Control = %q, want private, max-age=~3600", cc)
			}

			// The name in the path is cosmetic.
			other := strings.Replace(u, "/reports/Bericht_%C3%BC.pdf", "/whatever.exe", 1)
			if resp, body := do(t, "GET", other, nil, nil); resp.StatusCode != 200 || !bytes.Equal(body, content) {
				t.Errorf("GET with another name: %d", resp.StatusCode)
			}

			resp, body = do(t, "HEAD", u, nil, nil)
			if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != int64(len(content)) || resp.Header.Get("Content-Type") != "application/pdf" {
				t.Errorf("HEAD: %d, body %d bytes, Content-Length %d, type %q", resp.StatusCode, len(body), resp.ContentLength, resp.Header.Get("Content-Type"))
			}

			resp, body = do(t, "GET", u, http.Header{"Range": {"bytes=1000-1999"}}, nil)
			if resp.StatusCode != 206 || !bytes.Equal(body, content[1000:2000]) ||
				resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 1000-1999/%d", len(content)) || resp.Header.Get("Content-Type") != "application/pdf" {
				t.Errorf("Range: %d, %d bytes, %q", resp.StatusCode, len(body), resp.Header.Get("Content-Range"))
			}
			resp, body = do(t, "GET", u, http.Header{"Range": {"bytes=-10"}}, nil)
			if resp.StatusCode != 206 || !bytes.Equal(body, content[len(content)-10:]) {
				t.Errorf("suffix Range: %d, %q", resp.StatusCode, body)
			}

			resp, body = do(t, "GET", u, http.Header{"If-None-Match": {m.ETag()}}, nil)
			if resp.StatusCode != 304 || len(body) != 0 {
				t.Errorf("If-None-Match: %d, %d bytes", resp.StatusCode, len(body))
			}
			resp, _ = do(t, "GET", u, http.Header{"If-None-Match": {`"other"`}}, nil)
			if resp.StatusCode != 200 {
				t.Errorf("If-None-Match with another tag: %d", resp.StatusCode)
			}
			resp, body = do(t, "GET", u, http.Header{"Range": {"bytes=1000-1999"}, "If-Range": {m.ETag()}}, nil)
			if resp.StatusCode != 206 || len(body) != 1000 {
				t.Errorf("If-Range: %d", resp.StatusCode)
			}

			resp, body = do(t, "POST", u, nil, nil)
			if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("POST: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
			}
			jsonError(t, resp, body)
		})
	}
}

func TestServeFileTypes(t *testing.T) {
	env := newTestEnv(t, "mux", nil)
	// An HTML file is sent as its stored type, as an attachment, sandboxed.
	html := env.put(t, fileserve.Outputs, "o", "page.html", []byte("<html><script>alert(1)</script></html>"))
	resp, _ := do(t, "GET", env.signedURL(t, html), nil, nil)
	if resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment;") {
		t.Errorf("html: %q, %q", resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
	}
	// A stored type is never replaced by sniffing.
	m, err := env.st.Put(bg, fileserve.NewFile{Area: fileserve.Outputs, Owner: "o", Name: "x.bin", MIMEType: "application/x-agentura"}, strings.NewReader("<html>"))
	if err != nil {
		t.Fatal(err)
	}
	resp, _ = do(t, "GET", env.signedURL(t, m), nil, nil)
	if got := resp.Header.Get("Content-Type"); got != "application/x-agentura" {
		t.Errorf("Content-Type = %q", got)
	}
	// Quotes and backslashes never break out of filename="...".
	m = env.put(t, fileserve.Outputs, "o", `we"ird\name;.txt`, []byte("x"))
	resp, _ = do(t, "GET", env.signedURL(t, m), nil, nil)
	if got, want := resp.Header.Get("Content-Disposition"), `attachment; filename="name;.txt"; filename*=UTF-8''name%3B.txt`; got != want {
		t.Errorf("Content-Disposition = %q, want %q", got, want)
	}
	m = env.put(t, fileserve.Outputs, "o", `say "hi".txt`, []byte("x"))
	resp, _ = do(t, "GET", env.signedURL(t, m), nil, nil)
	if got, want := resp.Header.Get("Content-Disposition"), `attachment; filename="say _hi_.txt"; filename*=UTF-8''say%20%22hi%22.txt`; got != want {
		t.Errorf("Content-Disposition = %q, want %q", got, want)
	}
}

func TestServeFileLargeUnderGin(t *testing.T) {
	// Large enough for sendfile; the status and headers gin holds back must
	// go out before the body is written underneath it.
	env := newTestEnv(t, "gin", nil)
	content := storetest.Pattern(8 << 20)
	m := env.put(t, fileserve.Outputs, "o", "big.bin", content)
	u := env.signedURL(t, m)
	resp, body := do(t, "GET", u, nil, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, content) {
		t.Fatalf("GET: %d, %d bytes", resp.StatusCode, len(body))
	}
	resp, body = do(t, "GET", u, http.Header{"Range": {"bytes=1000000-"}}, nil)
	if resp.StatusCode != 206 || !bytes.Equal(body, content[1000000:]) {
		t.Fatalf("Range: %d, %d bytes", resp.StatusCode, len(body))
	}
}

func TestDownloadWhileDeleted(t *testing.T) {
	for _, mount := range mounts {
		t.Run(mount, func(t *testing.T) {
			env := newTestEnv(t, mount, nil)
			content := storetest.Pattern(32 << 20)
			m := env.put(t, fileserve.Outputs, "o", "big.bin", content)
			resp, err := http.Get(env.signedURL(t, m))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			first := make([]byte, 1<<20)
			if _, err := io.ReadFull(resp.Body, first); err != nil {
				t.Fatal(err)
			}
			if err := env.st.Delete(bg, fileserve.Outputs, "o", m.ID); err != nil {
				t.Fatal(err)
			}
			rest, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(append(first, rest...), content) {
				t.Fatalf("download cut by Delete: %d bytes of %d", len(first)+len(rest), len(content))
			}
			resp2, body := do(t, "GET", env.signedURL(t, m), nil, nil)
			if resp2.StatusCode != 404 {
				t.Errorf("after Delete: %d", resp2.StatusCode)
			}
			jsonError(t, resp2, body)
		})
	}
}

func TestServeFileTokens(t *testing.T) {
	for _, mount := range mounts {
		t.Run(mount, func(t *testing.T) {
			env := newTestEnv(t, mount, nil)
			mine := env.put(t, fileserve.Outputs, "alice", "mine.txt", []byte("alice's file"))
			theirs := env.put(t, fileserve.Outputs, "bob", "theirs.txt", []byte("bob's file"))
			swept := env.put(t, fileserve.Outputs, "alice", "swept.txt", []byte("old"))
			sweptURL := env.signedURL(t, swept)
			env.st.Delete(bg, fileserve.Outputs, "alice", swept.ID)

			good := env.signedURL(t, mine)
			base, token, _ := strings.Cut(good, "?token=")
			sign := func(s *signing.Signer, c signing.Claims) string {
				tok, err := s.Sign(c)
				if err != nil {
					t.Fatal(err)
				}
				return tok
			}
			inHour := time.Now().Add(time.Hour)
			past := newTestSigner(t, env.ts.URL, testSecret, signing.WithClock(func() time.Time { return time.Now().Add(-2 * time.Hour) }))
			otherKey := newTestSigner(t, env.ts.URL, []byte("another secret of thirty-two bytes!"))
			otherAudience := newTestSigner(t, "https://other.example", testSecret)

			for _, tc := range []struct {
				name, url string
				status    int
				reason    string
			}{
				{"good", good, 200, ""},
				{"missing token", base, 403, "token is required"},
				{"empty token", base + "?token=", 403, "token is required"},
				{"garbage", base + "?token=garbage", 403, "malformed"},
				{"tampered payload", base + "?token=" + flip(token, 1), 403, ""},
				{"tampered signature", base + "?token=" + flip(token, 2), 403, "signature is invalid"},
				{"tampered header", base + "?token=" + flip(token, 0), 403, ""},
				{"no signature", base + "?token=" + strings.Join(strings.Split(token, ".")[:2], ".") + ".", 403, "signature"},
				{"alg none", base + "?token=" + algNone(t, env.ts.URL, mine), 403, "algorithm"},
				{"other key", base + "?token=" + sign(otherKey, signing.Claims{Owner: "alice", FileID: mine.ID, Area: "outputs", ExpiresAt: inHour}), 403, "key this server does not have"},
				{"other audience", base + "?token=" + sign(otherAudience, signing.Claims{Owner: "alice", FileID: mine.ID, Area: "outputs", ExpiresAt: inHour}), 403, "another server"},
				{"expired", base + "?token=" + sign(past, signing.Claims{Owner: "alice", FileID: mine.ID, Area: "outputs", ExpiresAt: time.Now().Add(-time.Hour)}), 403, "expired"},
				{"token of another file", base + "?token=" + strings.Split(env.signedURL(t, theirs), "?token=")[1], 403, "another file"},
				{"own token on another's file id", strings.Replace(good, mine.ID, theirs.ID, 1), 403, "another file"},
				{"token naming another owner's file", env.ts.URL + "/files/" + theirs.ID + "/x?token=" + sign(env.signer, signing.Claims{Owner: "alice", FileID: theirs.ID, Area: "outputs", ExpiresAt: inHour}), 404, "not found"},
				{"token for another area", base + "?token=" + sign(env.signer, signing.Claims{Owner: "alice", FileID: mine.ID, Area: "staging", ExpiresAt: inHour}), 404, "not found"},
				{"token without area", base + "?token=" + sign(env.signer, signing.Claims{Owner: "alice", FileID: mine.ID, ExpiresAt: inHour}), 403, "area"},
				{"token with a bad area", base + "?token=" + sign(env.signer, signing.Claims{Owner: "alice", FileID: mine.ID, Area: "../tmp", ExpiresAt: inHour}), 403, "area"},
				{"swept file", sweptURL, 404, "not found"},
				{"unknown id", env.ts.URL + "/files/" + fileserve.NewID() + "/x?token=" + token, 403, "another file"},
			} {
				resp, body := do(t, "GET", tc.url, nil, nil)
				if resp.StatusCode != tc.status {
					t.Errorf("%s: status %d, want %d (%s)", tc.name, resp.StatusCode, tc.status, body)
					continue
				}
				if tc.status == 200 {
					if string(body) != "alice's file" {
						t.Errorf("%s: body %q", tc.name, body)
					}
					continue
				}
				if reason := jsonError(t, resp, body); !strings.Contains(reason, tc.reason) {
					t.Errorf("%s: reason %q, want it to mention %q", tc.name, reason, tc.reason)
				}
				if resp.Header.Get("Content-Disposition") != "" || resp.Header.Get("Etag") != "" {
					t.Errorf("%s: error carries file headers", tc.name)
				}
			}
		})
	}
}

// algNone builds an unsigned token claiming file m, as an attacker would.
func algNone(t *testing.T, audience string, m fileserve.Meta) string {
	k, err := signing.NewKey(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none", "typ": "JWT", "kid": k.ID}) + "." +
		enc(map[string]any{"fid": m.ID, "area": string(m.Area), "sub": m.Owner, "aud": []string{audience}, "exp": time.Now().Add(time.Hour).Unix()}) + "."
}

func TestServeFilePathAttacks(t *testing.T) {
	for _, mount := range mounts {
		t.Run(mount, func(t *testing.T) {
			env := newTestEnv(t, mount, nil)
			// A secret beside the store, and one inside it (another owner's).
			secret := "TOP-SECRET-" + fileserve.NewID()
			os.WriteFile(filepath.Join(filepath.Dir(env.st.Root()), "secret.txt"), []byte(secret), 0o600)
			m := env.put(t, fileserve.Outputs, "alice", "a.txt", []byte("alice"))
			bobs := env.put(t, fileserve.Outputs, "bob", "b.txt", []byte(secret))
			token := strings.Split(env.signedURL(t, m), "?token=")[1]
			q := "?token=" + token
			for _, p := range []string{
				"/files/../../etc/passwd",
				"/files/../secret.txt",
				"/files/..%2f..%2fsecret.txt",
				"/files/%2e%2e/%2e%2e/secret.txt",
				"/files/%2e%2e%2f%2e%2e%2fsecret.txt",
				"/files/..%5c..%5csecret.txt",
				"/files/" + m.ID + "%5c..%5c..%5csecret.txt",
				"/files/%2fetc%2fpasswd",
				"/files//etc/passwd",
				"/files/" + m.ID + "/../" + bobs.ID + "/b.txt",
				"/files/" + bobs.ID + "/../" + m.ID,
				"/files/" + m.ID + "%00/a.txt",
				"/files/" + m.ID[:31] + "%00/a.txt",
				"/files/" + m.ID + m.ID + "/a.txt",
				"/files/" + m.ID + "0/a.txt",
				"/files/" + m.ID[:31] + "/a.txt",
				"/files/" + strings.ToUpper(m.ID) + "/a.txt",
				"/files/" + strings.Repeat("a", 4096) + "/a.txt",
				"/files/outputs/" + fileserve.OwnerKey("bob") + "/" + bobs.ID + "/data",
				"/files/",
				"/files",
			} {
				for _, query := range []string{"", q} {
					resp, body := do(t, "GET", env.ts.URL+p+query, nil, nil)
					if resp.StatusCode == 200 || bytes.Contains(body, []byte(secret)) {
						t.Errorf("GET %s: %d %q", p+query[:min(len(query), 8)], resp.StatusCode, body)
					}
				}
			}
			// Parsed paths as a client may not send them: a NUL and a
			// backslash in the decoded path.
			for _, p := range []string{"/files/" + m.ID + "\x00/a.txt", `/files/..\..\secret.txt`, "/files/" + m.ID + `\..\x`} {
				req, _ := http.NewRequest("GET", env.ts.URL, nil)
				req.URL.Path = p
				req.URL.RawQuery = q[1:]
				rec := newRecorder()
				env.srv.ServeFile(rec, req)
				if rec.code == 200 || bytes.Contains(rec.body.Bytes(), []byte(secret)) {
					t.Errorf("ServeFile(%q): %d", p, rec.code)
				}
			}
		})
	}
}

func TestServeFileMountings(t *testing.T) {
	env := newTestEnv(t, "mux", nil)
	m := env.put(t, fileserve.Outputs, "o", "files/x.txt", []byte("content"))
	u, _ := url.Parse(env.signedURL(t, m))
	for _, p := range []string{
		u.Path,                                // /files/<id>/files/x.txt
		"/agents/ocr/files/" + m.ID + "/x",    // behind a path prefix
		"/" + m.ID + "/files/x.txt",           // http.StripPrefix("/files", ...)
		m.ID + "/x",                           // http.StripPrefix("/files/", ...)
		"/files/" + m.ID,                      // no name
		"/files/" + m.ID + "/",                // empty name
		"/files/" + m.ID + "/a/b/c/d/e/f.txt", // any name
	} {
		req, _ := http.NewRequest("GET", "http://x/", nil)
		req.URL.Path = p
		req.URL.RawQuery = u.RawQuery
		rec := newRecorder()
		env.srv.ServeFile(rec, req)
		if rec.code != 200 || rec.body.String() != "content" {
			t.Errorf("%s: %d %q", p, rec.code, rec.body.String())
		}
	}
}

func TestDownloadMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	env := newTestEnv(t, "gin", func(c *Config) { c.Metrics = reg })
	m := env.put(t, fileserve.Outputs, "o", "x.bin", storetest.Pattern(5000))
	u := env.signedURL(t, m)
	do(t, "GET", u, nil, nil)
	do(t, "GET", u, http.Header{"Range": {"bytes=0-99"}}, nil)
	do(t, "HEAD", u, nil, nil)
	do(t, "GET", strings.Split(u, "?")[0], nil, nil)
	got := gather(t, reg)
	for k, want := range map[string]float64{
		`agentura_downloads_total{status="200"}`: 2,
		`agentura_downloads_total{status="206"}`: 1,
		`agentura_downloads_total{status="403"}`: 1,
		`agentura_download_bytes_total`:          5100, // file content only: not the 403's JSON body
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	// A second server on the same registry shares the counters.
	if _, err := NewServer(Config{Store: env.st, Signer: env.signer, PublicURL: env.ts.URL, Metrics: reg}); err != nil {
		t.Errorf("second server on one registry: %v", err)
	}
}

// gather returns every sample of reg by name{labels}.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			if lp := m.GetLabel(); len(lp) > 0 {
				var parts []string
				for _, l := range lp {
					parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
				}
				key += "{" + strings.Join(parts, ",") + "}"
			}
			out[key] = m.GetCounter().GetValue()
		}
	}
	return out
}

// recorder is a minimal ResponseWriter for calling handlers directly.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.body.Write(p)
}

func TestKnownSizeSeeksLikeTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	content := []byte("0123456789abcdef")
	os.WriteFile(path, content, 0o600)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k := sizedObject(f, int64(len(content)))
	if n, _ := k.Seek(0, io.SeekEnd); n != 16 {
		t.Errorf("end = %d", n)
	}
	if b, _ := io.ReadAll(k); len(b) != 0 {
		t.Errorf("read %q at the end", b)
	}
	if n, _ := k.Seek(0, io.SeekStart); n != 0 {
		t.Errorf("start = %d", n)
	}
	if b, _ := io.ReadAll(io.LimitReader(k, 4)); string(b) != "0123" {
		t.Errorf("first bytes %q", b)
	}
	if n, _ := k.Seek(10, io.SeekStart); n != 10 {
		t.Errorf("seek 10 = %d", n)
	}
	if b, _ := io.ReadAll(k); string(b) != "abcdef" {
		t.Errorf("after seek %q", b)
	}
	if n, _ := k.Seek(0, io.SeekEnd); n != 16 { // a real seek now
		t.Errorf("end again = %d", n)
	}

	// A relative seek after a faked one starts from where the caller believes it is.
	g, _ := os.Open(path)
	defer g.Close()
	k = sizedObject(g, int64(len(content)))
	k.Seek(0, io.SeekEnd)
	if n, _ := k.Seek(0, io.SeekCurrent); n != 16 {
		t.Errorf("current after faked end = %d", n)
	}
	if n, err := k.Seek(-6, io.SeekCurrent); n != 10 || err != nil {
		t.Errorf("back 6 from the faked end = %d, %v", n, err)
	}
	if b, _ := io.ReadAll(k); string(b) != "abcdef" {
		t.Errorf("after a relative seek %q", b)
	}
}
