package attack

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentura/agentura/internal/testkit/attackdata"
)

// attackCase is one attack and the check of its safe outcome.
type attackCase struct {
	category, name string
	run            func(t *testing.T, e *env)
}

// minCases is the least number of cases the catalogue must hold.
const minCases = 150

func TestAttacks(t *testing.T) {
	e := agents(t)
	cases := catalogue()
	if len(cases) < minCases {
		t.Fatalf("the catalogue has %d cases, want at least %d", len(cases), minCases)
	}
	counts := map[string]int{}
	for _, c := range cases {
		counts[c.category]++
		t.Run(c.category+"/"+c.name, func(t *testing.T) { c.run(t, e) })
	}
	t.Logf("%d attack cases: %v", len(cases), counts)
}

func catalogue() []attackCase {
	var cs []attackCase
	for _, part := range [][]attackCase{tokenCases(), nameCases(), ssrfCases(), sizeCases(), servedCases(), authCases(), protocolCases(), deleteCases()} {
		cs = append(cs, part...)
	}
	return cs
}

// refused asserts a tool call failed, with a message containing want (if
// given) and leaking nothing.
func refused(t *testing.T, r toolResult, want ...string) {
	t.Helper()
	if !r.isError {
		t.Fatalf("the attack succeeded: %s", r.text)
	}
	for _, w := range want {
		if !strings.Contains(strings.ToLower(r.text), strings.ToLower(w)) {
			t.Errorf("error %q does not say %q", trunc(r.text), w)
		}
	}
	if l := leaks(r.text); len(l) > 0 {
		t.Errorf("error leaks %v: %s", l, trunc(r.text))
	}
}

func trunc(s string) string {
	if len(s) > 500 {
		return s[:500] + "…"
	}
	return s
}

func status(t *testing.T, r reply, want ...int) {
	t.Helper()
	for _, w := range want {
		if r.status == w {
			return
		}
	}
	t.Fatalf("status %d, want %v: %s", r.status, want, r)
}

// --- tokens -----------------------------------------------------------------

// outputURL makes a small output on the open agent and returns its URL.
func outputURL(t *testing.T, e *env) string {
	t.Helper()
	r := call(t, e.open, "", "archive_files", map[string]any{"sources": []any{dataURI("a.txt", []byte("hello"))}, "name": "t"})
	if r.isError || len(r.files()) == 0 {
		t.Fatalf("archive_files: %s", r.text)
	}
	return r.files()[0]["download_url"].(string)
}

// tokenParts splits a download URL into its base and the token's header and
// payload.
func tokenParts(t *testing.T, raw string) (base string, header, payload map[string]any) {
	t.Helper()
	u, _ := url.Parse(raw)
	tok := u.Query().Get("token")
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", tok)
	}
	for i, dst := range []*map[string]any{&header, &payload} {
		b, _ := base64.RawURLEncoding.DecodeString(parts[i])
		json.Unmarshal(b, dst)
	}
	u.RawQuery = ""
	return u.String(), header, payload
}

func forge(t *testing.T, method jwt.SigningMethod, key any, header, payload map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, jwt.MapClaims(payload))
	for k, v := range header {
		if k != "alg" && k != "typ" {
			tok.Header[k] = v
		}
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func clone(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func tokenCases() []attackCase {
	type mutate func(h, p map[string]any) (jwt.SigningMethod, any)
	hs := func(h, p map[string]any) (jwt.SigningMethod, any) { return jwt.SigningMethodHS256, []byte(signingKey) }
	forged := []struct {
		name string
		edit func(h, p map[string]any)
		key  mutate
		want string
	}{
		{"expired", func(h, p map[string]any) { p["exp"] = time.Now().Add(-time.Hour).Unix() }, hs, "expired"},
		{"future nbf", func(h, p map[string]any) { p["nbf"] = time.Now().Add(time.Hour).Unix() }, hs, "not valid yet"},
		{"no exp", func(h, p map[string]any) { delete(p, "exp") }, hs, "expiry"},
		{"other audience", func(h, p map[string]any) { p["aud"] = "https://other.example" }, hs, "another server"},
		{"no audience", func(h, p map[string]any) { delete(p, "aud") }, hs, "audience"},
		{"other file id", func(h, p map[string]any) { p["fid"] = strings.Repeat("f", 32) }, hs, ""},
		{"no subject", func(h, p map[string]any) { delete(p, "sub") }, hs, "owner"},
		{"wrong key", func(h, p map[string]any) {}, func(h, p map[string]any) (jwt.SigningMethod, any) {
			return jwt.SigningMethodHS256, []byte("another-key-another-key-another-key-0123")
		}, "signature"},
		{"unknown kid", func(h, p map[string]any) { h["kid"] = "000000000000" }, hs, "key"},
		// RFC 7515 §4.1.11: the agent's own key, a critical extension it
		// does not understand.
		{"crit header", func(h, p map[string]any) {
			h["crit"], h["urn:example:must-understand"] = []string{"urn:example:must-understand"}, true
		}, hs, "crit"},
		{"alg none", func(h, p map[string]any) {}, func(h, p map[string]any) (jwt.SigningMethod, any) {
			return jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType
		}, "algorithm"},
		{"alg HS512", func(h, p map[string]any) {}, func(h, p map[string]any) (jwt.SigningMethod, any) {
			return jwt.SigningMethodHS512, []byte(signingKey)
		}, "algorithm"},
		{"alg HS384", func(h, p map[string]any) {}, func(h, p map[string]any) (jwt.SigningMethod, any) {
			return jwt.SigningMethodHS384, []byte(signingKey)
		}, "algorithm"},
		{"staging area", func(h, p map[string]any) { p["area"] = "staging" }, hs, ""},
		{"other owner", func(h, p map[string]any) { p["sub"] = "mallory" }, hs, ""},
	}
	var cs []attackCase
	for _, f := range forged {
		cs = append(cs, attackCase{"tokens", "download token " + f.name, func(t *testing.T, e *env) {
			base, h, p := tokenParts(t, outputURL(t, e))
			h, p = clone(h), clone(p)
			f.edit(h, p)
			m, key := f.key(h, p)
			r := do(t, http.MethodGet, base+"?token="+forge(t, m, key, h, p), nil)
			status(t, r, http.StatusForbidden, http.StatusNotFound)
			if f.want != "" && !strings.Contains(string(r.body), f.want) {
				t.Errorf("answer %s does not say %q", r, f.want)
			}
			if bytes.Contains(r.body, []byte("PK")) {
				t.Error("the file was served")
			}
		}})
	}
	plain := []struct{ name, suffix string }{
		{"no token", ""},
		{"empty token", "?token="},
		{"garbage token", "?token=abc"},
		{"three empty parts", "?token=.."},
		{"huge token", "?token=" + strings.Repeat("A", 8000)},
		{"token with NUL", "?token=%00"},
	}
	for _, p := range plain {
		cs = append(cs, attackCase{"tokens", "download " + p.name, func(t *testing.T, e *env) {
			base, _, _ := tokenParts(t, outputURL(t, e))
			status(t, do(t, http.MethodGet, base+p.suffix, nil), http.StatusForbidden, http.StatusBadRequest, http.StatusRequestURITooLong, http.StatusRequestHeaderFieldsTooLarge)
		}})
	}
	cs = append(cs,
		attackCase{"tokens", "token truncated", func(t *testing.T, e *env) {
			u := outputURL(t, e)
			status(t, do(t, http.MethodGet, u[:len(u)-5], nil), http.StatusForbidden)
		}},
		attackCase{"tokens", "token of one file on another id", func(t *testing.T, e *env) {
			u := outputURL(t, e)
			other := outputURL(t, e)
			base, _, _ := tokenParts(t, other)
			tok, _ := url.Parse(u)
			status(t, do(t, http.MethodGet, base+"?token="+tok.Query().Get("token"), nil), http.StatusForbidden, http.StatusNotFound)
		}},
		attackCase{"tokens", "token signature flipped", func(t *testing.T, e *env) {
			u := outputURL(t, e)
			last := u[len(u)-1]
			flip := byte('A')
			if last == 'A' {
				flip = 'B'
			}
			status(t, do(t, http.MethodGet, u[:len(u)-1]+string(flip), nil), http.StatusForbidden)
		}},
		attackCase{"tokens", "valid token still works (control)", func(t *testing.T, e *env) {
			status(t, do(t, http.MethodGet, outputURL(t, e), nil), http.StatusOK)
		}},
		attackCase{"tokens", "download URL of the open agent on the jwt agent", func(t *testing.T, e *env) {
			u := outputURL(t, e)
			status(t, do(t, http.MethodGet, strings.Replace(u, e.open.URL, e.jwt.URL, 1), nil), http.StatusForbidden, http.StatusNotFound)
		}},
	)
	return cs
}

// --- names and paths --------------------------------------------------------

func nameCases() []attackCase {
	names := map[string]string{
		"traversal":       "../../../../etc/passwd",
		"absolute":        "/etc/shadow",
		"windows":         `..\..\windows\system32\config\sam`,
		"NUL":             "a\x00b.txt",
		"newline":         "a\nContent-Type: text/html\n.txt",
		"RTL override":    "invoice\u202efdp.exe",
		"dots only":       "...",
		"dot dot":         "..",
		"300 bytes":       strings.Repeat("A", 300),
		"300 bytes utf-8": strings.Repeat("ü", 150) + ".txt",
		"quotes":          `a"; filename="evil.html`,
		"html":            "<script>alert(1)</script>.txt",
		"percent encoded": "%2e%2e%2fetc%2fpasswd",
		"zero width":      "a\u200bb\u200d.txt",
		"empty":           "",
		"spaces":          "   ",
		"device":          "/dev/zero",
		"many slashes":    strings.Repeat("a/", 600) + "x.txt",
		"line separator":  "a\u2028b.txt",
		"invalid utf-8":   "a\xff\xfe.txt",
	}
	var cs []attackCase
	for label, name := range names {
		cs = append(cs, attackCase{"names and paths", "input name " + label, func(t *testing.T, e *env) {
			r := call(t, e.open, "", "archive_files", map[string]any{
				"sources": []any{map[string]any{"name": name, "content": "data:;base64,aGVsbG8="}}, "name": name})
			if r.isError {
				refused(t, r) // a refusal is safe, if it leaks nothing
				return
			}
			for _, f := range r.files() {
				fn := fmt.Sprint(f["filename"])
				if strings.Contains(fn, "..") && strings.Contains(fn, "/") || strings.HasPrefix(fn, "/") || strings.ContainsAny(fn, "\x00\n\r\u202e") || len(filepath.Base(fn)) > 255 {
					t.Errorf("output named %q", fn)
				}
			}
		}})
	}
	paths := map[string]string{
		"/etc/passwd":          "outside",
		"root/../etc/passwd":   "outside",
		"symlink out":          "link.txt",
		"symlinked folder":     "linkdir/secret.txt",
		"fifo":                 "fifo.txt",
		"hard link to the key": "key-link.txt",
		"folder":               "sub",
		"missing":              "nope.txt",
		"double slash":         "//etc/passwd",
		"relative climb":       "../outside/secret.txt",
		"proc environ":         "/proc/self/environ",
		"tilde":                "~/.ssh/id_rsa.pub",
		"file over the cap":    "big.bin",
		"dot segments":         "sub/../../outside/secret.txt",
		"backslash climb":      `..\outside\secret.txt`,
	}
	for label, p := range paths {
		cs = append(cs, attackCase{"names and paths", "path input " + label, func(t *testing.T, e *env) {
			content := p
			switch p {
			case "outside":
				content = "/etc/passwd"
				if label != "/etc/passwd" {
					content = e.root + "/../outside/secret.txt"
				}
			case "link.txt", "linkdir/secret.txt", "fifo.txt", "key-link.txt", "sub", "nope.txt", "big.bin":
				content = filepath.Join(e.root, p)
			}
			done := make(chan toolResult, 1)
			go func() {
				done <- call(t, e.open, "", "inspect_file", map[string]any{"source": map[string]any{"name": "x.txt", "content": content}})
			}()
			select {
			case r := <-done:
				refused(t, r)
			case <-time.After(30 * time.Second):
				t.Fatal("the call blocked")
			}
		}})
	}
	cs = append(cs, attackCase{"names and paths", "path inside the root (control)", func(t *testing.T, e *env) {
		r := call(t, e.open, "", "inspect_file", map[string]any{"source": map[string]any{"name": "ok.txt", "content": filepath.Join(e.root, "ok.txt")}})
		if r.isError {
			t.Fatalf("a file inside the root was refused: %s", r.text)
		}
	}})
	return cs
}

// --- SSRF -------------------------------------------------------------------

func ssrfCases() []attackCase {
	targets := []string{
		"http://127.0.0.1:1/x.txt", "http://localhost:1/x.txt", "http://[::1]:1/x.txt", "http://0.0.0.0:1/x.txt",
		"http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/x.txt", "http://192.168.1.1/x.txt",
		"http://172.16.0.1/x.txt", "http://100.64.0.1/x.txt", "http://2130706433/x.txt", "http://0x7f000001/x.txt",
		"http://017700000001/x.txt", "http://127.1/x.txt", "http://[::ffff:127.0.0.1]/x.txt", "http://[::127.0.0.1]/x.txt",
		"http://[2002:7f00:1::1]/x.txt", "http://[fe80::1]/x.txt", "http://[fc00::1]/x.txt", "http://224.0.0.1/x.txt",
		"http://255.255.255.255/x.txt", "http://localhost./x.txt", "http://LOCALHOST/x.txt", "http://127.0.0.1.nip.io/x.txt",
		"file:///etc/passwd", "gopher://127.0.0.1:25/x", "ftp://127.0.0.1/x", "dict://127.0.0.1:11211/", "jar:http://x/!/",
		"http://user:s3cretpw@127.0.0.1:1/x.txt",
	}
	var cs []attackCase
	for _, u := range targets {
		cs = append(cs, attackCase{"SSRF", u, func(t *testing.T, e *env) {
			r := call(t, e.open, "", "inspect_file", map[string]any{"source": map[string]any{"name": "x.txt", "content": u}})
			refused(t, r)
			if strings.Contains(r.text, "s3cretpw") {
				t.Errorf("the password is echoed: %s", r.text)
			}
		}})
	}
	redirects := []string{"http://127.0.0.1:1/", "http://169.254.169.254/", "http://[::1]:1/", "file:///etc/passwd", "http://10.0.0.1/"}
	for _, to := range redirects {
		cs = append(cs, attackCase{"SSRF", "redirect to " + to, func(t *testing.T, e *env) {
			u := e.redirect + "/to?u=" + url.QueryEscape(to)
			refused(t, call(t, e.open, "", "inspect_file", map[string]any{"source": map[string]any{"name": "x.txt", "content": u}}))
		}})
	}
	cs = append(cs,
		attackCase{"SSRF", "redirect to the agent itself", func(t *testing.T, e *env) {
			u := e.redirect + "/to?u=" + url.QueryEscape(e.open.URL+"/metrics")
			refused(t, call(t, e.open, "", "inspect_file", map[string]any{"source": map[string]any{"name": "x.txt", "content": u}}))
		}},
		attackCase{"SSRF", "allowed host (control)", func(t *testing.T, e *env) {
			r := call(t, e.open, "", "inspect_file", map[string]any{"source": map[string]any{"name": "x.txt", "content": e.redirect + "/x.txt"}})
			if r.isError {
				t.Fatalf("the allowed host was refused: %s", r.text)
			}
		}},
		attackCase{"SSRF", "hostile Content-Disposition name", func(t *testing.T, e *env) {
			r := call(t, e.open, "", "archive_files", map[string]any{"sources": []any{e.redirect + "/named"}})
			if r.isError {
				refused(t, r)
				return
			}
			if strings.Contains(r.text, "../") || strings.Contains(r.text, "\u202e") {
				t.Errorf("hostile name kept: %s", r.text)
			}
		}},
	)
	return cs
}

// --- size and resource exhaustion --------------------------------------------

func sizeCases() []attackCase {
	cs := []attackCase{
		{"size", "upload over the cap by Content-Length", func(t *testing.T, e *env) {
			r, _ := upload(t, e.open, "", "big.bin", make([]byte, uploadCap+1))
			status(t, r, http.StatusRequestEntityTooLarge)
		}},
		{"size", "upload over the cap chunked", func(t *testing.T, e *env) {
			body := struct{ *bytes.Reader }{bytes.NewReader(make([]byte, uploadCap+1))} // no length: chunked
			status(t, do(t, http.MethodPost, e.open.URL+"/uploads", body, "X-Filename", "c.bin"), http.StatusRequestEntityTooLarge)
		}},
		{"size", "inline input over the cap", func(t *testing.T, e *env) {
			refused(t, call(t, e.open, "", "inspect_file", map[string]any{"source": dataURI("a.bin", make([]byte, uploadCap+1))}), "AGENT_MAX_UPLOAD_BYTES")
		}},
		{"size", "fetched input over the cap", func(t *testing.T, e *env) {
			refused(t, call(t, e.open, "", "inspect_file", map[string]any{"source": e.redirect + "/big"}), "limit")
		}},
		{"size", "one staged URL listed 300 times (E3)", func(t *testing.T, e *env) {
			_, u := upload(t, e.open, "", "one.bin", bytes.Repeat([]byte{7}, uploadCap))
			srcs := make([]any, 100)
			for i := range srcs {
				srcs[i] = u
			}
			r := call(t, e.open, "", "archive_files", map[string]any{"sources": srcs, "name": "amp"})
			if r.isError {
				refused(t, r)
				return
			}
			for _, f := range r.files() {
				if n, _ := f["size_bytes"].(float64); n > 3*uploadCap {
					t.Errorf("%v is %v bytes from one %d-byte input", f["filename"], n, uploadCap)
				}
			}
		}},
		{"size", "more archive items than allowed", func(t *testing.T, e *env) {
			srcs := make([]any, 101)
			for i := range srcs {
				srcs[i] = dataURI(fmt.Sprintf("f%d.txt", i), []byte{byte(i)})
			}
			refused(t, call(t, e.open, "", "archive_files", map[string]any{"sources": srcs}), "100")
		}},
		{"size", "distinct inputs over the call budget", func(t *testing.T, e *env) {
			srcs := make([]any, 4)
			for i := range srcs {
				_, srcs[i] = upload(t, e.open, "", fmt.Sprintf("f%d.bin", i), bytes.Repeat([]byte{byte(i)}, uploadCap))
			}
			refused(t, call(t, e.open, "", "archive_files", map[string]any{"sources": srcs}), "AGENT_MAX_CALL_INPUT_BYTES")
		}},
		{"size", "validation error over a huge array (E8)", func(t *testing.T, e *env) {
			r := call(t, e.open, "", "inspect_file", map[string]any{"source": make([]int, 300_000)})
			refused(t, r)
			if len(r.text) > 8<<10 {
				t.Errorf("error text of %d bytes", len(r.text))
			}
		}},
		{"size", "validation error over many short strings (E8)", func(t *testing.T, e *env) {
			chunks := make([]string, 1000)
			for i := range chunks {
				chunks[i] = strings.Repeat("QUFB", 250)
			}
			r := call(t, e.open, "", "inspect_file", map[string]any{"source": chunks})
			refused(t, r)
			if len(r.text) > 8<<10 {
				t.Errorf("error text of %d bytes", len(r.text))
			}
		}},
		{"size", "deeply nested arguments", func(t *testing.T, e *env) {
			raw := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"inspect_file","arguments":{"source":` +
				strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}}`)
			r, _ := rpc(t, e.open, "", raw)
			if r.status >= 500 {
				t.Errorf("status %d", r.status)
			}
		}},
		{"size", "300-byte output name (E12)", func(t *testing.T, e *env) {
			// The example's schema caps the name (maxLength 100), so the
			// refusal comes first and says so; the composer's filename has no
			// cap and must be cut to fit NAME_MAX with its prefix.
			r := call(t, e.open, "", "archive_files", map[string]any{"sources": []any{"data:,x"}, "name": strings.Repeat("A", 300)})
			if r.isError && (!strings.Contains(r.text, "maxLength") || strings.Contains(r.text, "/tmp") || strings.Contains(r.text, "too long")) {
				t.Fatalf("a long name failed without saying which limit: %s", r.text)
			}
			r = call(t, e.composer, "", "compose_document", map[string]any{"markdown": "# hi", "format": "pptx", "filename": strings.Repeat("F", 300)})
			if r.isError {
				t.Fatalf("a long filename failed: %s", r.text)
			}
		}},
		{"size", "composer pptx with 260k slides (E4)", func(t *testing.T, e *env) {
			refused(t, call(t, e.composer, "", "compose_document", map[string]any{"markdown": strings.Repeat("# a\n\nb\n\n", 260000), "format": "pptx"}), "limit")
		}},
		{"size", "composer page breaks past the limit", func(t *testing.T, e *env) {
			refused(t, call(t, e.composer, "", "compose_document", map[string]any{"markdown": strings.Repeat("a\n\n---\n\n", 1100), "format": "pdf"}), "pages")
		}},
		{"size", "composer slides past the limit", func(t *testing.T, e *env) {
			refused(t, call(t, e.composer, "", "compose_document", map[string]any{"markdown": strings.Repeat("# a\n\nb\n\n", 1100), "format": "pptx"}), "slides")
		}},
		{"size", "composer Markdown over 2 MiB", func(t *testing.T, e *env) {
			refused(t, call(t, e.composer, "", "compose_document", map[string]any{"markdown": strings.Repeat("a", 2<<20+1)}), "bytes")
		}},
		{"size", "composer PNG bomb (E5)", func(t *testing.T, e *env) {
			bomb := attackdata.PNGBomb(16, 16, 256<<20)
			refused(t, call(t, e.composer, "", "compose_document", map[string]any{"markdown": "![x](z.png)", "format": "pdf",
				"embeds": []any{map[string]any{"name": "z.png", "content": "data:image/png;base64," + base64.StdEncoding.EncodeToString(bomb)}}}), "decompression bomb")
		}},
		{"size", "composer PNG header of 100k x 100k", func(t *testing.T, e *env) {
			png := attackdata.RawPNG(100000, 100000, 6, []byte{0x78, 0x9c, 3, 0, 0, 0, 0, 1})
			refused(t, call(t, e.composer, "", "compose_document", map[string]any{"markdown": "![x](z.png)", "format": "pdf",
				"embeds": []any{map[string]any{"name": "z.png", "content": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)}}}), "pixels")
		}},
		{"size", "composer nesting 1000 deep", func(t *testing.T, e *env) {
			refused(t, call(t, e.composer, "", "compose_document", map[string]any{"markdown": strings.Repeat("> ", 1000) + "x"}), "deep")
		}},
		{"size", "composer 101 embeds", func(t *testing.T, e *env) {
			var em []any
			for i := range 101 {
				em = append(em, map[string]any{"name": fmt.Sprintf("i%d.png", i), "content": "data:image/png;base64,iVBORw0KGgo="})
			}
			refused(t, call(t, e.composer, "", "compose_document", map[string]any{"markdown": "x", "embeds": em}), "embeds")
		}},
		{"size", "composer links per paragraph", func(t *testing.T, e *env) {
			refused(t, call(t, e.composer, "", "compose_document", map[string]any{"markdown": strings.Repeat("[a](b) ", 2000)}), "links")
		}},
		{"size", "composer unclosed links (quadratic scan)", func(t *testing.T, e *env) {
			r := call(t, e.composer, "", "compose_document", map[string]any{"markdown": strings.Repeat("[a](", 200000)})
			if !r.isError {
				return // parsed within the scan budget
			}
			refused(t, r)
		}},
		{"size", "composer 300-byte file name (E12)", func(t *testing.T, e *env) {
			r := call(t, e.composer, "", "compose_document", map[string]any{"markdown": "# hi", "format": "pptx", "filename": strings.Repeat("F", 300)})
			if r.isError {
				t.Fatalf("a long file name failed: %s", r.text)
			}
		}},
		{"size", "composer merge of a non-PDF", func(t *testing.T, e *env) {
			refused(t, call(t, e.composer, "", "merge_pdfs", map[string]any{"sources": []any{dataURI("a.pdf", []byte("%PDF-1.4 garbage")), dataURI("b.pdf", []byte("nope"))}}))
		}},
	}
	return cs
}
