package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/client"
)

const hint = "a file name from this conversation or a path under /home/me"

// The shapes a host must show as names: a file in $defs reached by $ref,
// nested objects, a list marked as a whole, embed items whose content is
// the file, and an enum that only looks like a schema.
const shapesSchema = `{
  "type": "object",
  "$defs": {
    "Attachment": {"type": ["object", "string"], "x-file": true, "description": "the scan.",
      "properties": {"name": {"type": "string"}, "content": {"type": "string"}}}
  },
  "properties": {
    "source": {"$ref": "#/$defs/Attachment"},
    "options": {"type": "object", "properties": {"logo": {"type": "string", "x-mcp-file": true, "title": "Logo"}, "dpi": {"type": "integer", "minimum": 72}}},
    "sources": {"type": "array", "x-file": true, "items": {"$ref": "#/$defs/Attachment"}},
    "embeds": {"type": "array", "items": {"type": "object", "required": ["name"],
      "properties": {"name": {"type": "string"}, "content": {"type": "string", "x-file": true}, "description": {"type": "string"}}}},
    "mode": {"type": "string", "enum": ["fast", "exact"], "default": {"x-file": true}}
  },
  "required": ["source"]
}`

func hostSchema(t *testing.T, schema string) map[string]any {
	t.Helper()
	var s any
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	out, err := client.HostSchema(s, hint)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func at(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	return m
}

func TestHostSchemaShowsFilePositionsAsNames(t *testing.T) {
	out := hostSchema(t, shapesSchema)
	raw, _ := json.Marshal(out)
	if strings.Contains(string(raw), `"x-mcp-file"`) || strings.Count(string(raw), `"x-file"`) != 1 { // the one left is data: mode's default
		t.Errorf("markers left in %s", raw)
	}
	// $ref'd single file: the definition itself becomes a string.
	att := at(out, "$defs", "Attachment")
	if att["type"] != "string" || att["description"] != "the scan: "+hint || att["properties"] != nil {
		t.Errorf("$defs.Attachment = %v", att)
	}
	if src := at(out, "properties", "source"); src["$ref"] != "#/$defs/Attachment" {
		t.Errorf("source = %v, want the $ref kept", src)
	}
	// Nested: the file becomes a string, its sibling keeps its schema.
	logo := at(out, "properties", "options", "properties", "logo")
	if logo["type"] != "string" || logo["title"] != "Logo" || logo["description"] != hint {
		t.Errorf("options.logo = %v", logo)
	}
	if dpi := at(out, "properties", "options", "properties", "dpi"); dpi["minimum"] != float64(72) {
		t.Errorf("options.dpi changed: %v", dpi)
	}
	// A list of files: an array of strings.
	sources := at(out, "properties", "sources")
	if sources["type"] != "array" || at(sources, "items")["type"] != "string" || !strings.Contains(sources["description"].(string), hint) {
		t.Errorf("sources = %v", sources)
	}
	// Embeds: the item keeps its shape, its content is a name.
	item := at(out, "properties", "embeds", "items")
	if content := at(item, "properties", "content"); content["type"] != "string" || content["description"] != hint {
		t.Errorf("embeds[].content = %v", content)
	}
	if item["required"].([]any)[0] != "name" || at(item, "properties", "description")["type"] != "string" {
		t.Errorf("embeds[] item changed beyond its content: %v", item)
	}
	if mode := at(out, "properties", "mode"); len(mode["enum"].([]any)) != 2 || at(mode, "default")["x-file"] != true {
		t.Errorf("mode changed: %v", mode)
	}
	if out["required"].([]any)[0] != "source" {
		t.Errorf("required changed: %v", out["required"])
	}
}

func TestHostSchemaLeavesTheInputAlone(t *testing.T) {
	var s map[string]any
	json.Unmarshal([]byte(shapesSchema), &s)
	before, _ := json.Marshal(s)
	if _, err := client.HostSchema(s, hint); err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(s); string(after) != string(before) {
		t.Errorf("HostSchema changed its input:\n%s\n%s", before, after)
	}
}

func TestHostSchemaForeignShapes(t *testing.T) {
	out := hostSchema(t, foreignSchema)
	if main := at(out, "properties", "main"); main["type"] != "string" || main["oneOf"] != nil {
		t.Errorf("main = %v", main)
	}
	// A nullable list (anyOf array|null marked as a whole) is a list of names.
	if extras := at(out, "properties", "extras"); extras["type"] != "array" || extras["anyOf"] != nil {
		t.Errorf("extras = %v", extras)
	}
	if off := at(out, "properties", "off"); off["x-file"] != false {
		t.Errorf("off (x-file: false) changed: %v", off)
	}
}

// What a host sends in the shapes HostSchema shows — names — is what the
// middleware resolves against the agent's own schema; a name the registry
// does not hold goes to Config.Resolve.
func TestHostFormArgumentsResolve(t *testing.T) {
	reg := newRegistry(t, nil)
	add(t, reg, "scan.png", "\x89PNG\r\n\x1a\n")
	var asked []string
	mw, err := client.New(client.Config{Registry: reg, Resolve: func(ctx context.Context, name string) (client.Entry, error) {
		asked = append(asked, name)
		if name == "docs/logo.png" {
			return reg.Add(ctx, name, strings.NewReader("\x89PNG\r\n\x1a\nlogo"), client.SourceUpload)
		}
		return client.Entry{}, errors.New("no such file under the roots")
	}})
	if err != nil {
		t.Fatal(err)
	}
	var s any
	json.Unmarshal([]byte(shapesSchema), &s)
	tool := &mcp.Tool{Name: "t", InputSchema: s}
	out, err := mw.RewriteArguments(context.Background(), tool, json.RawMessage(
		`{"source": "scan.png", "options": {"logo": "docs/logo.png"}, "sources": ["scan.png"], "embeds": [{"name": "scan.png"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := out.(map[string]any)
	if src := m["source"].(map[string]any); src["name"] != "scan.png" || !strings.HasPrefix(src["content"].(string), "data:image/png") {
		t.Errorf("source = %v", src)
	}
	if logo := m["options"].(map[string]any)["logo"].(string); !strings.HasPrefix(logo, "data:image/png;name=logo.png") {
		t.Errorf("options.logo = %.60s", logo)
	}
	if e := m["embeds"].([]any)[0].(map[string]any); !strings.HasPrefix(e["content"].(string), "data:image/png") {
		t.Errorf("embeds[0] = %v", e)
	}
	if len(asked) != 1 || asked[0] != "docs/logo.png" {
		t.Errorf("Resolve asked for %v, want only docs/logo.png", asked)
	}
	_, err = mw.RewriteArguments(context.Background(), tool, json.RawMessage(`{"source": "missing.png"}`))
	if err == nil || !strings.Contains(err.Error(), "no such file under the roots") {
		t.Errorf("missing name: %v", err)
	}
}

// The schema an agentura agent publishes refers to its FileAttachment
// definition, whose content describes what the agent accepts (data URIs,
// URLs, paths, base64): once every file position is a name, nothing refers
// to it, and a host must not show it, while a definition a kept property
// names (directly or through another definition) stays.
func TestHostSchemaDropsUnreferencedDefinitions(t *testing.T) {
	type Embed struct {
		Name    string                `json:"name"`
		Content agentcore.FileContent `json:"content,omitempty"`
	}
	type Input struct {
		Source  agentcore.FileAttachment   `json:"source"`
		Sources []agentcore.FileAttachment `json:"sources,omitempty"`
		Embeds  []Embed                    `json:"embeds,omitempty"`
	}
	agentSide, _, err := agentcore.InputSchema[Input]()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(agentSide)
	if !strings.Contains(string(raw), `"FileAttachment"`) || !strings.Contains(string(raw), "base64") {
		t.Fatalf("the agent's schema has no FileAttachment definition describing base64 to drop: %s", raw)
	}
	out := hostSchema(t, string(raw))
	shown, _ := json.Marshal(out)
	for _, bad := range []string{"FileAttachment", "base64", "data URI", "x-file"} {
		if strings.Contains(string(shown), bad) {
			t.Errorf("the host's schema still holds %q: %s", bad, shown)
		}
	}
	// A definition a kept property names stays, and so does one that only a
	// kept definition names; one nothing names goes.
	out = hostSchema(t, `{"type": "object",
	  "$defs": {"Layout": {"type": "object", "properties": {"margins": {"$ref": "#/$defs/Margins"}}},
	            "Margins": {"type": "object", "properties": {"top": {"type": "integer"}}},
	            "File": {"type": "object", "properties": {"content": {"type": "string", "description": "base64"}}},
	            "Unused": {"type": "string"}},
	  "properties": {"layout": {"$ref": "#/$defs/Layout"}, "doc": {"anyOf": [{"$ref": "#/$defs/File"}, {"type": "string"}], "x-file": true}}}`)
	var kept []string
	for name := range at(out, "$defs") {
		kept = append(kept, name)
	}
	slices.Sort(kept)
	if !slices.Equal(kept, []string{"Layout", "Margins"}) {
		t.Errorf("definitions kept: %v, want Layout and Margins", kept)
	}
}
