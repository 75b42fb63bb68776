package agentcore

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/agentcore/internal/urlfetch"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestResolveForms(t *testing.T) {
	svc := newTestService(t, nil)
	call := svc.newCall("t", "alice", "")
	defer call.end()
	ctx := context.Background()
	pngData := pngBytes(t)
	b64 := base64.StdEncoding.EncodeToString(pngData)

	cases := []struct {
		name, fname, content string
		wantName, wantMIME   string
		want                 []byte
	}{
		{"data URI with name param", "", "data:image/png;name=chart.png;base64," + b64, "chart.png", "image/png", pngData},
		{"data URI, explicit name wins", "scan.png", "data:image/png;name=chart.png;base64," + b64, "scan.png", "image/png", pngData},
		{"data URI percent-encoded", "note.txt", "data:text/plain,hello%20world", "note.txt", "text/plain; charset=utf-8", []byte("hello world")},
		{"base64 standard", "x.png", b64, "x.png", "image/png", pngData},
		{"base64 URL alphabet unpadded", "x.png", base64.RawURLEncoding.EncodeToString(pngData), "x.png", "image/png", pngData},
		{"base64 with line breaks and spaces", "x.png", wrap(b64, 60), "x.png", "image/png", pngData},
		{"hostile name is reduced to a base name", "../../etc/passwd", b64, "passwd", "image/png", pngData},
		{"no name at all", "", b64, "file", "image/png", pngData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := call.ResolveFile(ctx, tc.fname, tc.content)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(f.Path) != tc.wantName || f.Name != tc.wantName {
				t.Errorf("name = %q (path %s), want %q", f.Name, f.Path, tc.wantName)
			}
			if !strings.HasPrefix(f.Path, call.dir+string(filepath.Separator)) {
				t.Errorf("path %s is not inside the call folder %s", f.Path, call.dir)
			}
			if f.MIMEType != tc.wantMIME {
				t.Errorf("MIME = %q, want %q", f.MIMEType, tc.wantMIME)
			}
			if got := readFile(t, f.Path); !bytes.Equal(got, tc.want) || f.Size != int64(len(tc.want)) {
				t.Errorf("content differs (%d bytes, size %d)", len(got), f.Size)
			}
		})
	}
}

func wrap(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i += n {
		end := min(i+n, len(s))
		b.WriteString(s[i:end])
		b.WriteString("\r\n ")
	}
	return b.String()
}

func TestResolveErrorsLeaveNothing(t *testing.T) {
	svc := newTestService(t, func(c *Config) { c.MaxUploadBytes = 1000 })
	call := svc.newCall("t", "alice", "")
	defer call.end()
	ctx := context.Background()
	big := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 1001))

	cases := []struct {
		name, fname, content string
		is                   error
		says                 string
	}{
		{"bare file name", "invoice.pdf", "invoice.pdf", ErrUnresolvedReference, `the content "invoice.pdf" is a file name, not the file`},
		{"content equals name, base64-looking", "README", "README", ErrUnresolvedReference, "is a file name, not the file"},
		{"bare name without name", "", "report.docx", ErrUnresolvedReference, "is a file name"},
		{"empty content with a name", "chart.png", "", ErrUnresolvedReference, "content is empty"},
		{"nothing", "", "", nil, "no file given"},
		{"too large base64", "x.bin", big, ErrInputTooLarge, "AGENT_MAX_UPLOAD_BYTES"},
		{"too large data URI", "x.bin", "data:application/octet-stream;base64," + big, ErrInputTooLarge, "AGENT_MAX_UPLOAD_BYTES"},
		{"data URI without comma", "x", "data:image/png;base64", nil, `malformed data URI: no ","`},
		{"data URI bad base64", "x.png", "data:image/png;base64,@@@@", nil, "not valid base64"},
		{"not base64", "x.bin", "QUJD$$$", nil, "not a data URI, an http(s) URL, a path or valid base64"},
		{"path while disabled", "x", "/etc/passwd", ErrPathInputsDisabled, "AGENT_INPUT_ROOTS is empty"},
		{"relative path while disabled", "x", "sub/dir/x.txt", ErrPathInputsDisabled, "AGENT_INPUT_ROOTS"},
		{"file scheme", "x", "file:///etc/passwd", nil, `unsupported URL scheme "file"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call.ResolveFile(ctx, tc.fname, tc.content)
			if err == nil {
				t.Fatal("resolved; want an error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("err = %q, want it to say %q", err, tc.says)
			}
			if left := filesIn(t, call.dir); len(left) > 0 {
				t.Errorf("a refused input left files behind: %v", left)
			}
		})
	}
}

func TestResolvePathsStayInsideRoots(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.WriteFile(filepath.Join(root, "sub", "scan.txt"), []byte("inside"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(root, "folder"), 0o755)
	svc := newTestService(t, func(c *Config) { c.InputRoots = []string{root} })
	call := svc.newCall("t", "alice", "")
	defer call.end()
	ctx := context.Background()
	realRoot, _ := filepath.EvalSymlinks(root)

	for _, p := range []string{filepath.Join(realRoot, "sub", "scan.txt"), "sub/scan.txt"} {
		f, err := call.ResolveFile(ctx, "", p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if f.Name != "scan.txt" || string(readFile(t, f.Path)) != "inside" {
			t.Errorf("%s: got %q %q", p, f.Name, readFile(t, f.Path))
		}
	}
	refused := map[string]string{
		filepath.Join(outside, "secret.txt"):           "is not inside",
		filepath.Join(realRoot, "link.txt"):            "leads outside its input root",
		filepath.Join(realRoot, "dirlink/secret.txt"):  "leads outside its input root",
		"../" + filepath.Base(outside) + "/secret.txt": "climbs out",
		filepath.Join(realRoot, "sub/../../x.txt"):     "is not inside",
		filepath.Join(realRoot, "missing.txt"):         "no file at",
		filepath.Join(realRoot, "folder"):              "not a regular file",
	}
	for p, says := range refused {
		_, err := call.ResolveFile(ctx, "x.txt", p)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: err = %v, want it to say %q", p, err, says)
		}
	}
	if left := filesIn(t, filepath.Join(call.dir, "in")); len(left) != 2 {
		t.Errorf("want only the two good inputs in the call folder, got %v", left)
	}
}

func TestResolveForeignURLBehindSSRFGuard(t *testing.T) {
	payload := bytes.Repeat([]byte("abcdefgh"), 100)
	mux := http.NewServeMux()
	mux.HandleFunc("/doc.txt", func(w http.ResponseWriter, r *http.Request) { w.Write(payload) })
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 100; i++ { // chunked, no Content-Length
			w.Write(payload)
			w.(http.Flusher).Flush()
		}
	})
	origin := httptest.NewServer(mux)
	defer origin.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("internal")) }))
	defer other.Close()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusFound)
	})
	originHost := strings.TrimPrefix(origin.URL, "http://")
	ctx := context.Background()

	guarded := newTestService(t, nil).newCall("t", "alice", "")
	defer guarded.end()
	_, err := guarded.ResolveFile(ctx, "doc.txt", origin.URL+"/doc.txt")
	var ssrf *urlfetch.SSRFError
	if !errors.As(err, &ssrf) || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "AGENT_FETCH_ALLOW_HOSTS") {
		t.Fatalf("loopback URL: err = %v, want an SSRF refusal naming AGENT_FETCH_ALLOW_HOSTS", err)
	}

	allowed := newTestService(t, func(c *Config) {
		c.FetchAllowHosts = []string{originHost}
		c.MaxUploadBytes = 4000
	}).newCall("t", "alice", "")
	defer allowed.end()
	f, err := allowed.ResolveFile(ctx, "", origin.URL+"/doc.txt")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "doc.txt" || !bytes.Equal(readFile(t, f.Path), payload) {
		t.Errorf("fetched %q with %d bytes", f.Name, f.Size)
	}
	if _, err := allowed.ResolveFile(ctx, "x", origin.URL+"/redirect"); !errors.As(err, &ssrf) {
		t.Errorf("redirect from an allowed host to a loopback one: err = %v, want an SSRF refusal", err)
	}
	if _, err := allowed.ResolveFile(ctx, "x", origin.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: err = %v", err)
	}
	if _, err := allowed.ResolveFile(ctx, "x", origin.URL+"/huge"); !errors.Is(err, ErrInputTooLarge) {
		t.Errorf("oversized stream: err = %v, want ErrInputTooLarge", err)
	}
	if left := filesIn(t, filepath.Join(allowed.dir, "in")); len(left) != 1 {
		t.Errorf("refused fetches left files: %v", left)
	}
}

func TestResolveOwnSignedURLLocally(t *testing.T) {
	// The public URL points nowhere: an own URL must be read from the store.
	svc := newTestService(t, func(c *Config) { c.PublicURL = "http://127.0.0.1:1" })
	ctx := context.Background()
	producer := svc.newCall("t", "alice", "")
	defer producer.end()
	res, err := producer.FileResponse(ctx, OutputBytes("report.txt", []byte("the report")))
	if err != nil {
		t.Fatal(err)
	}
	u := res.Files[0].DownloadURL

	same := svc.newCall("t", "alice", "")
	defer same.end()
	f, err := same.ResolveFile(ctx, "", u)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "report.txt" || string(readFile(t, f.Path)) != "the report" {
		t.Errorf("got %q: %q", f.Name, readFile(t, f.Path))
	}
	// Another host name for the same agent (a peer in a compose network).
	alias := strings.Replace(u, "127.0.0.1:1", "composer-agent:8002", 1)
	if _, err := same.ResolveFile(ctx, "r.txt", alias); err != nil {
		t.Errorf("alias host: %v", err)
	}

	other := svc.newCall("t", "mallory", "")
	defer other.end()
	if _, err := other.ResolveFile(ctx, "", u); err == nil {
		t.Error("another owner resolved alice's URL")
	}
	tampered := u[:len(u)-3] + flip(u[len(u)-3:])
	if _, err := same.ResolveFile(ctx, "", tampered); err == nil {
		t.Error("a tampered own URL resolved")
	}
}

func flip(s string) string {
	b := []byte(s)
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	return string(b)
}

func TestSanitizeName(t *testing.T) {
	cases := map[string]string{
		"invoice.pdf":                     "invoice.pdf",
		"../../etc/passwd":                "passwd",
		`..\..\windows\x.ini`:             "x.ini",
		"/abs/path/a.png":                 "a.png",
		"..":                              "",
		".":                               "",
		".hidden":                         ".hidden",
		"a\x00b.txt":                      "ab.txt",
		"new\nline.txt":                   "newline.txt",
		"Bericht_ü.pdf":                   "Bericht_ü.pdf",
		"":                                "",
		strings.Repeat("x", 300) + ".pdf": strings.Repeat("x", transport.SanitizedNameBytes-4) + ".pdf",
	}
	for in, want := range cases {
		if got := SanitizeName(in); got != want {
			t.Errorf("SanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func ExampleSanitizeName() {
	fmt.Println(SanitizeName("../../etc/passwd"))
	fmt.Println(SanitizeName(`C:\Users\me\scan 1.png`))
	// Output:
	// passwd
	// scan 1.png
}
