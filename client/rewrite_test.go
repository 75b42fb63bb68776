package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
)

// A schema in the shapes other servers write: x-mcp-file, "definitions",
// a $ref chain, oneOf, an object nested in an object, and a nullable list.
const foreignSchema = `{
  "type": "object",
  "definitions": {
    "Doc": {"$ref": "#/definitions/DocInner"},
    "DocInner": {"type": "object", "properties": {"name": {"type": "string"}, "content": {"type": "string"}}}
  },
  "properties": {
    "main": {"oneOf": [{"$ref": "#/definitions/Doc"}, {"type": "string"}], "x-mcp-file": true},
    "options": {"type": "object", "properties": {"logo": {"type": "string", "x-file": true}, "title": {"type": "string"}}},
    "extras": {"anyOf": [{"type": "array", "items": {"$ref": "#/definitions/Doc"}}, {"type": "null"}], "x-file": true},
    "plain": {"type": "string"},
    "off": {"type": "string", "x-file": false}
  }
}`

func rewrite(t *testing.T, schema, args string) (map[string]any, error) {
	t.Helper()
	return rewriteWith(t, client.Config{}, schema, args)
}

// rewriteWith is rewrite with cfg (its Registry is made here).
func rewriteWith(t *testing.T, cfg client.Config, schema, args string) (map[string]any, error) {
	t.Helper()
	reg := newRegistry(t, nil)
	add(t, reg, "a.txt", "alpha")
	add(t, reg, "logo.png", "\x89PNG\r\n\x1a\n")
	cfg.Registry = reg
	mw, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var s any
	json.Unmarshal([]byte(schema), &s)
	out, err := mw.RewriteArguments(context.Background(), &mcp.Tool{Name: "t", InputSchema: s}, json.RawMessage(args))
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

func TestRewriteFollowsForeignSchemas(t *testing.T) {
	out, err := rewrite(t, foreignSchema,
		`{"main": "a.txt", "options": {"logo": "logo.png", "title": "a.txt"}, "extras": "a.txt", "plain": "a.txt", "off": "a.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	main := out["main"].(map[string]any)
	if main["name"] != "a.txt" || main["content"] != "data:text/plain;name=a.txt;base64,YWxwaGE=" {
		t.Errorf("main = %v", main)
	}
	opts := out["options"].(map[string]any)
	if !strings.HasPrefix(opts["logo"].(string), "data:image/png;name=logo.png;base64,") || opts["title"] != "a.txt" {
		t.Errorf("options = %v", opts)
	}
	extras := out["extras"].([]any)
	if len(extras) != 1 || extras[0].(map[string]any)["content"] != "data:text/plain;name=a.txt;base64,YWxwaGE=" {
		t.Errorf("extras = %v (a lone string for a list is one item)", extras)
	}
	if out["plain"] != "a.txt" || out["off"] != "a.txt" {
		t.Errorf("fields without x-file changed: %v %v", out["plain"], out["off"])
	}
}

func TestRewriteLeavesResolvedContentAlone(t *testing.T) {
	out, err := rewrite(t, foreignSchema,
		`{"main": {"name": "x.txt", "content": "data:text/plain;base64,eA=="}, "extras": [{"name": "y", "content": "https://example.com/y"}], "options": {"logo": null}}`)
	if err != nil {
		t.Fatal(err)
	}
	if out["main"].(map[string]any)["content"] != "data:text/plain;base64,eA==" ||
		out["extras"].([]any)[0].(map[string]any)["content"] != "https://example.com/y" || out["options"].(map[string]any)["logo"] != nil {
		t.Errorf("out = %v", out)
	}
}

func TestRewriteUnknownNameSaysWhere(t *testing.T) {
	_, err := rewrite(t, foreignSchema, `{"extras": ["a.txt", {"name": "b.txt"}]}`)
	if err == nil || !strings.Contains(err.Error(), `argument extras[1]: file "b.txt" is not in the registry; the files known are: a.txt, logo.png`) {
		t.Errorf("err = %v", err)
	}
}

func TestFileFields(t *testing.T) {
	var s any
	json.Unmarshal([]byte(foreignSchema), &s)
	fields, err := client.FileFields(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fields {
		p := f.Path
		if f.Array {
			p += " (list)"
		}
		got = append(got, p)
	}
	if strings.Join(got, ", ") != "extras (list), main, options.logo" {
		t.Errorf("FileFields = %v", got)
	}
}

func TestBaseURLFromEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8001/mcp":      "http://localhost:8001",
		"https://gw.example/ocr/mcp/":    "https://gw.example/ocr",
		"http://127.0.0.1:9/mcp?x=1#top": "http://127.0.0.1:9",
	} {
		if got, err := client.BaseURLFromEndpoint(in); err != nil || got != want {
			t.Errorf("BaseURLFromEndpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := client.BaseURLFromEndpoint("localhost:8001"); err == nil {
		t.Error("a URL without scheme was accepted")
	}
}

// A recursive schema, as a tree type has (each node with two children of
// its own type), is walked once per node, not once per path: 2^64 paths
// would never end.
func TestRecursiveSchemasAreWalkedOnce(t *testing.T) {
	const tree = `{
  "type": "object",
  "$defs": {
    "node": {"type": "object", "properties": {
      "left": {"$ref": "#/$defs/node"}, "right": {"$ref": "#/$defs/node"},
      "label": {"type": "string"}, "attachment": {"type": "string", "x-file": true}}},
    "plain": {"type": "object", "properties": {
      "left": {"$ref": "#/$defs/plain"}, "right": {"$ref": "#/$defs/plain"}, "label": {"type": "string"}}}
  },
  "properties": {"root": {"$ref": "#/$defs/node"}, "other": {"$ref": "#/$defs/plain"}}
}`
	done := make(chan struct{})
	var fields []client.FileField
	var out map[string]any
	var ferr, rerr error
	go func() {
		defer close(done)
		var s any
		json.Unmarshal([]byte(tree), &s)
		fields, ferr = client.FileFields(s)
		out, rerr = rewrite(t, tree, `{"root": {"attachment": "a.txt", "left": {"attachment": "a.txt"}}, "other": {"left": {"label": "x"}}}`)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a recursive schema was still being walked after 30 s")
	}
	if ferr != nil || rerr != nil {
		t.Fatalf("FileFields: %v; rewrite: %v", ferr, rerr)
	}
	if len(fields) == 0 || fields[0].Path != "root.attachment" {
		t.Errorf("file fields = %+v, want root.attachment first", fields)
	}
	root := out["root"].(map[string]any)
	left := root["left"].(map[string]any)
	for _, c := range []any{root["attachment"], left["attachment"]} {
		if s, _ := c.(string); !strings.HasPrefix(s, "data:") {
			t.Errorf("attachment not sent as a data URI: %v", c)
		}
	}
}

// A schema whose branches name themselves (anyOf [A, A] in A) is nonsense,
// but one a server may send: it must not hang the host either.
func TestSelfReferringBranchesEnd(t *testing.T) {
	const loop = `{
  "type": "object",
  "$defs": {"a": {"x-file": true, "anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}, {"type": "string"}]}},
  "properties": {"f": {"$ref": "#/$defs/a"}}
}`
	done := make(chan error, 1)
	go func() {
		_, err := rewrite(t, loop, `{"f": "a.txt"}`)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("rewrite: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("self-referring branches were still being walked after 30 s")
	}
}

// A data: URI or URL where a file name goes is sent as it is by default
// (a person wrote it on the command line) and refused under RefuseLiterals
// (a model wrote it), in every shape: a string, an object's content, an
// object's name, an item of a list.
func TestRefuseLiterals(t *testing.T) {
	const dataURI = "data:text/plain;base64,YWxwaGE="
	const link = "https://files.example/x.pdf?token=SECRET"
	for _, args := range []string{
		`{"main": "` + dataURI + `"}`,
		`{"main": {"name": "x.pdf", "content": "` + link + `"}}`,
		`{"main": {"name": "` + link + `"}}`,
		`{"extras": ["a.txt", "` + link + `"]}`,
		`{"options": {"logo": "` + dataURI + `"}}`,
	} {
		if _, err := rewrite(t, foreignSchema, args); err != nil {
			t.Errorf("%s, by default: %v, want it sent as it is", args, err)
		}
		_, err := rewriteWith(t, client.Config{RefuseLiterals: true}, foreignSchema, args)
		if !errors.Is(err, client.ErrLiteralFile) || !strings.Contains(err.Error(), "argument ") || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s, refused: %v, want ErrLiteralFile naming the argument, without the URL's query", args, err)
		}
	}
	// A file URI without its token is a reference, not a literal: passed on
	// as it is, in every shape, under RefuseLiterals too.
	const ref = "mcp-file://agent.example/in/01a24f90-8a48-78b8-bda1-237462bbe264"
	for _, cfg := range []client.Config{{}, {RefuseLiterals: true}} {
		out, err := rewriteWith(t, cfg, foreignSchema, `{"main": "`+ref+`", "extras": ["a.txt", {"name": "b.pdf", "content": "`+ref+`"}]}`)
		if err != nil || out["main"] != ref || out["extras"].([]any)[1].(map[string]any)["content"] != ref {
			t.Errorf("a reference (RefuseLiterals %v): %v %v; want it passed on", cfg.RefuseLiterals, out, err)
		}
	}
	// Names still resolve.
	if out, err := rewriteWith(t, client.Config{RefuseLiterals: true}, foreignSchema, `{"main": "a.txt"}`); err != nil || out["main"].(map[string]any)["name"] != "a.txt" {
		t.Errorf("a name under RefuseLiterals: %v %v", out, err)
	}
}
