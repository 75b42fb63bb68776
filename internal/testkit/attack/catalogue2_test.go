package attack

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// --- served content -----------------------------------------------------------

// served stages body under name on the open agent, makes it an output and
// downloads it.
func served(t *testing.T, e *env, name string, body []byte, hdr ...string) reply {
	t.Helper()
	r := call(t, e.open, "", "archive_files", map[string]any{"sources": []any{map[string]any{"name": name, "content": dataURI(name, body)}}, "name": "s"})
	if r.isError {
		t.Fatal(r.text)
	}
	// The listing beside the archive carries the name; download the zip.
	return do(t, http.MethodGet, r.files()[0]["download_url"].(string), nil, hdr...)
}

func stagedDownload(t *testing.T, e *env, name string, body []byte, hdr ...string) reply {
	t.Helper()
	r, u := upload(t, e.open, "", name, body)
	status(t, r, http.StatusCreated)
	return do(t, http.MethodGet, u, nil, hdr...)
}

func servedCases() []attackCase {
	hostile := map[string][]byte{
		"html":        []byte("<html><script>alert(document.cookie)</script>"),
		"svg":         []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`),
		"xhtml":       []byte(`<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>`),
		"js":          []byte("alert(1)"),
		"pdf with js": []byte("%PDF-1.4\n1 0 obj<</OpenAction<</JS(app.alert(1))/S/JavaScript>>>>endobj"),
		"txt as html": []byte("<script>alert(1)</script>"),
	}
	ext := map[string]string{"html": ".html", "svg": ".svg", "xhtml": ".xhtml", "js": ".js", "pdf with js": ".pdf", "txt as html": ".txt"}
	var cs []attackCase
	for label, body := range hostile {
		cs = append(cs, attackCase{"served content", "staged " + label + " is served inert", func(t *testing.T, e *env) {
			r := stagedDownload(t, e, "x"+ext[label], body)
			status(t, r, http.StatusOK)
			if !strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment") {
				t.Errorf("Content-Disposition %q, want attachment", r.header.Get("Content-Disposition"))
			}
			if r.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
			if ct := r.header.Get("Content-Type"); strings.Contains(ct, "html") || strings.Contains(ct, "svg") || strings.Contains(ct, "javascript") {
				if r.header.Get("Content-Security-Policy") == "" {
					t.Errorf("active type %q served without a CSP", ct)
				}
			}
		}})
	}
	names := map[string]string{
		"quote in name":  `a".html`,
		"CRLF in name":   "a%0d%0aSet-Cookie: x=1.txt",
		"unicode name":   "Bericht_ü.txt",
		"semicolon name": "a; filename=evil.html",
	}
	for label, name := range names {
		cs = append(cs, attackCase{"served content", label, func(t *testing.T, e *env) {
			r := stagedDownload(t, e, name, []byte("x"))
			if r.status != http.StatusOK {
				return
			}
			cd := r.header.Get("Content-Disposition")
			if strings.ContainsAny(cd, "\r\n") || r.header.Get("Set-Cookie") != "" {
				t.Errorf("header injection: %q", cd)
			}
			if strings.Count(cd, "filename=") > 1 && !strings.Contains(cd, "filename*=") {
				t.Errorf("second filename in %q", cd)
			}
		}})
	}
	cs = append(cs,
		attackCase{"served content", "range request stays in bounds", func(t *testing.T, e *env) {
			r := stagedDownload(t, e, "r.txt", []byte("0123456789"), "Range", "bytes=5-100000")
			status(t, r, http.StatusPartialContent, http.StatusOK)
			if len(r.body) > 10 {
				t.Errorf("%d bytes for a 10-byte file", len(r.body))
			}
		}},
		attackCase{"served content", "unsatisfiable range", func(t *testing.T, e *env) {
			status(t, stagedDownload(t, e, "r.txt", []byte("0123456789"), "Range", "bytes=100-200"), http.StatusRequestedRangeNotSatisfiable)
		}},
		attackCase{"served content", "many ranges", func(t *testing.T, e *env) {
			rs := make([]string, 500)
			for i := range rs {
				rs[i] = fmt.Sprintf("%d-%d", i%10, i%10)
			}
			r := stagedDownload(t, e, "r.txt", []byte("0123456789"), "Range", "bytes="+strings.Join(rs, ","))
			if len(r.body) > 100<<10 {
				t.Errorf("%d bytes for a 10-byte file", len(r.body))
			}
		}},
		attackCase{"served content", "zip output inert", func(t *testing.T, e *env) {
			r := served(t, e, "a.html", []byte("<script>alert(1)</script>"))
			if !strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment") || r.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("headers %v", r.header)
			}
		}},
		attackCase{"resources", "E13: a 2000 × 240 table is refused by its cells before it is built", func(t *testing.T, e *env) {
			md := "|" + strings.Repeat("a|", 240) + "\n|" + strings.Repeat("-|", 240) + "\n" + strings.Repeat("|"+strings.Repeat("a|", 240)+"\n", 2000)
			for _, format := range []string{"pptx", "docx"} {
				r := call(t, e.composer, "", "compose_document", map[string]any{"markdown": md, "format": format})
				if !r.isError || !strings.Contains(r.text, "a table has 480240 cells") || !strings.Contains(r.text, "split the table") {
					t.Errorf("%s: %.300s, want a refusal naming the cells per table", format, r.text)
				}
			}
		}},
		attackCase{"resources", "E13: 2 MiB of emphasis is refused while it is parsed", func(t *testing.T, e *env) {
			r := call(t, e.composer, "", "compose_document", map[string]any{"markdown": strings.Repeat("*a* ", (2<<20)/4), "format": "docx"})
			if !r.isError || !strings.Contains(r.text, "lines and inline elements") {
				t.Errorf("%.300s, want a refusal naming the inline elements", r.text)
			}
		}},
		attackCase{"served content", "HTML output of the composer is escaped", func(t *testing.T, e *env) {
			r := call(t, e.composer, "", "compose_document", map[string]any{"markdown": "# <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1))", "format": "html"})
			if r.isError {
				t.Fatal(r.text)
			}
			d := do(t, http.MethodGet, r.files()[0]["download_url"].(string), nil)
			if bytes.Contains(d.body, []byte("<script>alert")) || bytes.Contains(d.body, []byte("<img src=x onerror")) || bytes.Contains(d.body, []byte(`href="javascript:`)) {
				t.Errorf("active content in the HTML output: %s", d.body)
			}
		}},
	)
	return cs
}

// --- auth and isolation ---------------------------------------------------------

func callerToken(t *testing.T, claims jwt.MapClaims, method jwt.SigningMethod, key any) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func good(sub string) jwt.MapClaims {
	return jwt.MapClaims{"sub": sub, "aud": audience, "iss": issuer, "exp": time.Now().Add(time.Hour).Unix()}
}

func authCases() []attackCase {
	secret := []byte(jwtSecret)
	bad := map[string]func(t *testing.T) string{
		"no token": func(*testing.T) string { return "" },
		"garbage":  func(*testing.T) string { return "garbage" },
		"alg none": func(t *testing.T) string {
			return callerToken(t, good("alice"), jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType)
		},
		"wrong secret": func(t *testing.T) string {
			return callerToken(t, good("alice"), jwt.SigningMethodHS256, []byte("x-wrong-secret-x-wrong-secret-x-wrong"))
		},
		"expired": func(t *testing.T) string {
			c := good("alice")
			c["exp"] = time.Now().Add(-time.Hour).Unix()
			return callerToken(t, c, jwt.SigningMethodHS256, secret)
		},
		"no exp": func(t *testing.T) string {
			c := good("alice")
			delete(c, "exp")
			return callerToken(t, c, jwt.SigningMethodHS256, secret)
		},
		"no sub": func(t *testing.T) string {
			c := good("")
			delete(c, "sub")
			return callerToken(t, c, jwt.SigningMethodHS256, secret)
		},
		"other audience": func(t *testing.T) string {
			c := good("alice")
			c["aud"] = "https://payroll.example"
			return callerToken(t, c, jwt.SigningMethodHS256, secret)
		},
		"no audience": func(t *testing.T) string {
			c := good("alice")
			delete(c, "aud")
			return callerToken(t, c, jwt.SigningMethodHS256, secret)
		},
		"other issuer": func(t *testing.T) string {
			c := good("alice")
			c["iss"] = "evil"
			return callerToken(t, c, jwt.SigningMethodHS256, secret)
		},
		"future nbf": func(t *testing.T) string {
			c := good("alice")
			c["nbf"] = time.Now().Add(time.Hour).Unix()
			return callerToken(t, c, jwt.SigningMethodHS256, secret)
		},
		"HS512 same secret": func(t *testing.T) string { return callerToken(t, good("alice"), jwt.SigningMethodHS512, secret) },
		"crit header naming an unknown extension": func(t *testing.T) string {
			tok := jwt.NewWithClaims(jwt.SigningMethodHS256, good("alice"))
			tok.Header["crit"] = []string{"urn:example:must-understand"}
			s, err := tok.SignedString(secret)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	var cs []attackCase
	for label, mk := range bad {
		for _, ep := range []string{"/mcp", "/uploads", "/a2a"} {
			cs = append(cs, attackCase{"auth and isolation", ep + " with " + label, func(t *testing.T, e *env) {
				hdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "X-Filename", "a.txt"}
				if tok := mk(t); tok != "" {
					hdr = append(hdr, "Authorization", "Bearer "+tok)
				}
				body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
				if ep == "/a2a" {
					body = `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`
				}
				r := do(t, http.MethodPost, e.jwt.URL+ep, strings.NewReader(body), hdr...)
				status(t, r, http.StatusUnauthorized)
				if !strings.Contains(r.header.Get("Content-Type"), "json") {
					t.Errorf("401 as %q", r.header.Get("Content-Type"))
				}
			}})
		}
	}
	tok := func(t *testing.T, sub string) string {
		return callerToken(t, good(sub), jwt.SigningMethodHS256, secret)
	}
	cs = append(cs,
		attackCase{"auth and isolation", "valid token (control)", func(t *testing.T, e *env) {
			r := call(t, e.jwt, tok(t, "alice"), "inspect_file", map[string]any{"source": "data:text/plain;name=a.txt;base64,aGk="})
			if r.isError {
				t.Fatal(r.text)
			}
		}},
		attackCase{"auth and isolation", "another owner's staged upload as input", func(t *testing.T, e *env) {
			_, u := upload(t, e.jwt, tok(t, "alice"), "a.txt", []byte("alice's"))
			refused(t, call(t, e.jwt, tok(t, "bob"), "inspect_file", map[string]any{"source": u}))
		}},
		attackCase{"auth and isolation", "another owner's A2A task", func(t *testing.T, e *env) {
			body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"data","data":{"skill":"inspect_file"}},{"kind":"file","file":{"name":"a.txt","bytes":"aGk="}}]}}}`
			r := do(t, http.MethodPost, e.jwt.URL+"/a2a", strings.NewReader(body), "Content-Type", "application/json", "Authorization", "Bearer "+tok(t, "alice"))
			status(t, r, http.StatusOK)
			id := between(string(r.body), `"id":"`, `"`)
			if id == "" {
				t.Fatalf("no task id in %s", r)
			}
			r = do(t, http.MethodPost, e.jwt.URL+"/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+id+`"}}`),
				"Content-Type", "application/json", "Authorization", "Bearer "+tok(t, "bob"))
			if !strings.Contains(string(r.body), "not found") || strings.Contains(string(r.body), "artifacts") {
				t.Errorf("bob reads alice's task: %s", r)
			}
		}},
	)
	for _, ep := range []string{"/a2a", "/uploads", "/.well-known/agent-card.json"} {
		cs = append(cs, attackCase{"auth and isolation", "DNS rebinding Host on " + ep, func(t *testing.T, e *env) {
			method := http.MethodPost
			if strings.HasPrefix(ep, "/.well") {
				method = http.MethodGet
			}
			port := e.open.URL[strings.LastIndex(e.open.URL, ":"):]
			r := do(t, method, e.open.URL+ep, strings.NewReader(`{}`), "Host", "evil.example"+port, "Origin", "http://evil.example"+port, "X-Filename", "a.txt", "Content-Type", "application/json")
			status(t, r, http.StatusForbidden)
		}})
	}
	for _, ep := range []string{"/a2a", "/uploads"} {
		cs = append(cs, attackCase{"auth and isolation", "cross-site Origin on " + ep, func(t *testing.T, e *env) {
			r := do(t, http.MethodPost, e.open.URL+ep, strings.NewReader("x"), "Origin", "http://evil.example", "X-Filename", "csrf.txt", "Content-Type", "text/plain")
			status(t, r, http.StatusForbidden)
		}})
	}
	cs = append(cs, attackCase{"auth and isolation", "DNS rebinding Host on /mcp", func(t *testing.T, e *env) {
		port := e.open.URL[strings.LastIndex(e.open.URL, ":"):]
		r := do(t, http.MethodPost, e.open.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), "Host", "evil.example"+port,
			"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
		status(t, r, http.StatusForbidden)
	}})
	return cs
}

func between(s, a, b string) string {
	i := strings.Index(s, a)
	if i < 0 {
		return ""
	}
	s = s[i+len(a):]
	j := strings.Index(s, b)
	if j < 0 {
		return ""
	}
	return s[:j]
}
