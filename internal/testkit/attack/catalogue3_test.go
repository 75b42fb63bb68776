package attack

import (
	"net/http"
	"strings"
	"testing"
)

// --- protocol abuse -------------------------------------------------------------

func protocolCases() []attackCase {
	mcpBodies := map[string]string{
		"invalid JSON":          `{"jsonrpc":`,
		"id without method":     `{"jsonrpc":"2.0","id":7}`,
		"empty batch":           `[]`,
		"batch of garbage":      `[1,2,3]`,
		"unknown method":        `{"jsonrpc":"2.0","id":1,"method":"evil/run"}`,
		"huge id":               `{"jsonrpc":"2.0","id":"` + strings.Repeat("9", 100000) + `","method":"tools/list"}`,
		"object id":             `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`,
		"unknown tool":          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}`,
		"arguments as array":    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"inspect_file","arguments":[1,2]}}`,
		"arguments as string":   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"inspect_file","arguments":"x"}}`,
		"null params":           `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
		"wrong jsonrpc version": `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`,
		"duplicate keys":        `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`,
		"NUL bytes":             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\x00\"}",
		"BOM":                   "\ufeff{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
	}
	var cs []attackCase
	for label, body := range mcpBodies {
		cs = append(cs, attackCase{"protocol abuse", "/mcp " + label, func(t *testing.T, e *env) {
			r, _ := rpc(t, e.open, "", []byte(body))
			if r.status >= 500 {
				t.Fatalf("server error: %s", r)
			}
			if label == "id without method" && (r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "method")) {
				t.Errorf("id without method: %s", r)
			}
		}})
	}
	contents := map[string]string{
		"//etc/passwd as content": "//etc/passwd",
		"bad base64 character":    "data:;base64," + strings.Repeat("QUFB", 100) + "!!!!",
		"data URI without comma":  "data:text/plain;base64",
		"unsupported scheme":      "smb://host/share/x",
		"bare file name":          "report.pdf",
		"empty content":           "",
		"javascript URI":          "javascript:alert(1)",
		"percent data URI broken": "data:,%zz",
	}
	for label, c := range contents {
		cs = append(cs, attackCase{"protocol abuse", label, func(t *testing.T, e *env) {
			r := call(t, e.open, "", "inspect_file", map[string]any{"source": map[string]any{"name": "x.bin", "content": c}})
			refused(t, r)
			if label == "bad base64 character" && !strings.Contains(r.text, "byte 400") {
				t.Errorf("offset not given: %s", r.text)
			}
		}})
	}
	methods := []struct{ method, path string }{
		{"PROPFIND", "/files/"}, {"TRACE", "/files/x"},
		{"PUT", "/uploads"}, {"GET", "/uploads"}, {"GET", "/a2a"}, {"DELETE", "/a2a"}, {"MKCOL", "/mcp"},
		{"PATCH", "/files/x"}, {"OPTIONS", "/files/x"},
	}
	for _, m := range methods {
		cs = append(cs, attackCase{"protocol abuse", m.method + " " + m.path, func(t *testing.T, e *env) {
			r := do(t, m.method, e.open.URL+m.path, nil)
			status(t, r, http.StatusMethodNotAllowed, http.StatusNoContent, http.StatusOK)
			if r.status == http.StatusOK && m.method != "OPTIONS" {
				t.Errorf("%s %s answered 200: %s", m.method, m.path, r)
			}
		}})
	}
	cs = append(cs,
		attackCase{"protocol abuse", "oversized /mcp body", func(t *testing.T, e *env) {
			r := rawPost(t, e.open.URL, "/mcp", 999999999, "{}")
			status(t, r, http.StatusRequestEntityTooLarge)
			if !strings.Contains(string(r.body), "/uploads") {
				t.Errorf("no hint at /uploads: %s", r)
			}
		}},
		attackCase{"protocol abuse", "A2A part with type instead of kind", func(t *testing.T, e *env) {
			r := do(t, http.MethodPost, e.open.URL+"/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"type":"file","file":{"name":"a.txt","bytes":"YQ=="}}]}}}`), "Content-Type", "application/json")
			if !strings.Contains(string(r.body), "kind") || !strings.Contains(string(r.body), "not type") {
				t.Errorf("unclear: %s", r)
			}
		}},
		attackCase{"protocol abuse", "A2A unknown method", func(t *testing.T, e *env) {
			r := do(t, http.MethodPost, e.open.URL+"/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"agent/pwn"}`), "Content-Type", "application/json")
			if r.status >= 500 || !strings.Contains(string(r.body), "error") {
				t.Errorf("%s", r)
			}
		}},
		attackCase{"protocol abuse", "A2A invalid JSON", func(t *testing.T, e *env) {
			r := do(t, http.MethodPost, e.open.URL+"/a2a", strings.NewReader(`{`), "Content-Type", "application/json")
			if r.status >= 500 || !strings.Contains(string(r.body), "error") {
				t.Errorf("%s", r)
			}
		}},
		attackCase{"protocol abuse", "A2A oversized body", func(t *testing.T, e *env) {
			status(t, rawPost(t, e.open.URL, "/a2a", 999999999, "{}"), http.StatusRequestEntityTooLarge)
		}},
		attackCase{"protocol abuse", "A2A file part pointing at a path outside the roots", func(t *testing.T, e *env) {
			r := do(t, http.MethodPost, e.open.URL+"/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":{"skill":"inspect_file"}},{"kind":"file","file":{"name":"p","uri":"/etc/passwd"}}]}}}`), "Content-Type", "application/json")
			if strings.Contains(string(r.body), "root:x:0:0") || !strings.Contains(string(r.body), "failed") {
				t.Errorf("%s", r)
			}
		}},
		attackCase{"protocol abuse", "X-Filename with CRLF", func(t *testing.T, e *env) {
			r := do(t, http.MethodPost, e.open.URL+"/uploads", strings.NewReader("x"), "X-Filename", "a%0D%0AX-Evil: 1.txt")
			if r.status >= 500 || r.header.Get("X-Evil") != "" {
				t.Errorf("%s", r)
			}
		}},
		attackCase{"protocol abuse", "X-Filename of 64 KiB", func(t *testing.T, e *env) {
			r := do(t, http.MethodPost, e.open.URL+"/uploads", strings.NewReader("x"), "X-Filename", strings.Repeat("n", 60000))
			if r.status >= 500 {
				t.Errorf("%s", r)
			}
		}},
		attackCase{"protocol abuse", "X-Request-Id injection", func(t *testing.T, e *env) {
			r := do(t, http.MethodGet, e.open.URL+"/healthz", nil, "X-Request-Id", strings.Repeat("i", 200))
			if len(r.header.Get("X-Request-Id")) > 64 {
				t.Errorf("request id echoed at %d bytes", len(r.header.Get("X-Request-Id")))
			}
		}},
		attackCase{"protocol abuse", "multipart upload without file field", func(t *testing.T, e *env) {
			body := "--b\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--b--\r\n"
			status(t, do(t, http.MethodPost, e.open.URL+"/uploads", strings.NewReader(body), "Content-Type", "multipart/form-data; boundary=b"), http.StatusBadRequest)
		}},
		attackCase{"protocol abuse", "upload without a name", func(t *testing.T, e *env) {
			status(t, do(t, http.MethodPost, e.open.URL+"/uploads", strings.NewReader("x")), http.StatusBadRequest)
		}},
		attackCase{"protocol abuse", "unknown path", func(t *testing.T, e *env) {
			status(t, do(t, http.MethodGet, e.open.URL+"/../../etc/passwd", nil), http.StatusNotFound, http.StatusMovedPermanently, http.StatusBadRequest)
		}},
	)
	return cs
}
