package agentcore

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzResolve feeds arbitrary names and contents to the resolver: it must
// never panic, a resolved file must sit in the call folder under its
// sanitised name, and a refused input must leave nothing behind.
func FuzzResolve(f *testing.F) {
	for _, seed := range [][2]string{
		{"a.png", "data:image/png;base64,iVBORw0KGgo="},
		{"", "data:;name=x.txt,hi%20there"},
		{"../../x", "QUJDRA=="},
		{"x", "/etc/passwd"},
		{"x", "./sub/../../x.txt"},
		{"n", "http://127.0.0.1:1/files/00000000000000000000000000000000/x?token=a.b.c"},
		{"\x00\u2028", "data:text/plain;name=%2e%2e%2f..,x"},
		{"invoice.pdf", "invoice.pdf"},
		{"", "-_-_"},
	} {
		f.Add(seed[0], seed[1])
	}
	svc := newTestService(f, func(c *Config) { c.MaxUploadBytes = 1 << 16 })
	f.Fuzz(func(t *testing.T, name, content string) {
		call := svc.newCall("fuzz", "owner", "")
		defer call.end()
		in, err := call.ResolveFile(context.Background(), name, content)
		if err != nil {
			if left := filesIn(t, call.dir); len(left) > 0 {
				t.Fatalf("refused input left %v", left)
			}
			return
		}
		rel, rerr := filepath.Rel(call.dir, in.Path)
		if rerr != nil || !filepath.IsLocal(rel) {
			t.Fatalf("resolved outside the call folder: %s", in.Path)
		}
		if filepath.Base(in.Path) != in.Name || in.Name == "" || strings.ContainsAny(in.Name, "/\\\x00") {
			t.Fatalf("bad name %q for %s", in.Name, in.Path)
		}
	})
}

// FuzzDecodeArgs feeds arbitrary JSON to the argument decoder of a tool
// with every kind of file parameter: errors are fine, panics are not.
func FuzzDecodeArgs(f *testing.F) {
	for _, seed := range []string{
		`{"source": "x", "format": "pdf"}`,
		`{"source": {"name": 1}, "sources": [null, "a", {}], "embeds": "data:;name=a,b", "format": "pdf"}`,
		`{"embeds": [["x"]], "optional": null}`,
		`[]`, `null`, `"s"`, `{"sources": {"sources": {}}}`,
	} {
		f.Add(seed)
	}
	dec, err := newArgDecoder(reflect.TypeFor[schemaInput]())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var in schemaInput
		_ = dec.decode(json.RawMessage(raw), &in)
	})
}
