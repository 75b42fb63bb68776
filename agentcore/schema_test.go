package agentcore

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/agentura/agentura/transfer/mcpfile"
)

type embedItem struct {
	Name        string      `json:"name" jsonschema:"file name of the image"`
	Content     FileContent `json:"content,omitempty" jsonschema:"the image"`
	Description string      `json:"description,omitempty"`
}

type schemaInput struct {
	Source   FileAttachment   `json:"source" jsonschema:"the scan" accept:"application/pdf, image/*"`
	Optional *FileAttachment  `json:"optional,omitempty"`
	Sources  []FileAttachment `json:"sources,omitempty"`
	Embeds   []embedItem      `json:"embeds,omitempty"`
	Format   string           `json:"format" enum:"pdf,docx"`
	Pages    int              `json:"pages,omitempty"`
}

func schemaJSON(t *testing.T) map[string]any {
	t.Helper()
	s, _, err := InputSchema[schemaInput]()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func get(t *testing.T, m map[string]any, path string) any {
	t.Helper()
	var cur any = m
	for _, key := range strings.Split(path, "/") {
		obj, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s: %q is not an object in %v", path, key, cur)
		}
		cur = obj[key]
	}
	return cur
}

func jsonEqual(t *testing.T, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("got  %s\nwant %s", g, want)
	}
}

// A file parameter is published as SEP-2631 §5 declares one: a URI string
// property with the markers; the seed's object form stays documented in
// $defs.FileAttachment, which nothing references.
func TestSchemaFileParamMatchesDesign(t *testing.T) {
	m := schemaJSON(t)
	jsonEqual(t, get(t, m, "properties/source"), `{"type": "string", "format": "uri", "x-file": true, "x-mcp-file": {"accept": ["application/pdf", "image/*"], "transferModes": ["inline", "upload"]}, "description": "the scan"}`)
	jsonEqual(t, get(t, m, "$defs/FileAttachment/required"), `["name", "content"]`)
	jsonEqual(t, get(t, m, "$defs/FileAttachment/type"), `"object"`)
	jsonEqual(t, get(t, m, "$defs/FileAttachment/properties/name/type"), `"string"`)
	jsonEqual(t, get(t, m, "$defs/FileAttachment/properties/content/type"), `"string"`)
	if b, _ := json.Marshal(m["properties"]); strings.Contains(string(b), "$ref") || strings.Contains(string(b), "anyOf") {
		t.Errorf("the published properties reference the object form: %s", b)
	}
}

// The accepted schema, which arguments are validated against, still takes
// the seed's object for a FileAttachment, and asserts no format on files.
func TestAcceptedSchemaTakesTheObjectForm(t *testing.T) {
	s, err := acceptedSchema(reflect.TypeFor[schemaInput]())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	var m map[string]any
	json.Unmarshal(b, &m)
	jsonEqual(t, get(t, m, "properties/source/anyOf"), `[{"$ref": "#/$defs/FileAttachment"}, {"type": "string"}]`)
	jsonEqual(t, get(t, m, "properties/sources/items/anyOf"), `[{"$ref": "#/$defs/FileAttachment"}, {"type": "string"}]`)
	jsonEqual(t, get(t, m, "properties/embeds/items/properties/content/type"), `"string"`)
	if strings.Contains(string(b), `"format":"uri"`) {
		t.Errorf("the accepted schema asserts a format on a file: %s", b)
	}
}

func TestSchemaOptionalPointerHasNoNullTrap(t *testing.T) {
	m := schemaJSON(t)
	jsonEqual(t, get(t, m, "properties/optional"), `{"type": "string", "format": "uri", "x-file": true, "x-mcp-file": {"transferModes": ["inline", "upload"]}}`)
	for _, r := range get(t, m, "required").([]any) {
		if r == "optional" || r == "sources" || r == "embeds" {
			t.Errorf("%v must not be required", r)
		}
	}
}

func TestSchemaArrayCarriesXFile(t *testing.T) {
	m := schemaJSON(t)
	jsonEqual(t, get(t, m, "properties/sources"), `{"type": "array", "items": {"type": "string", "format": "uri", "x-mcp-file": {"transferModes": ["inline", "upload"]}}, "x-file": true}`)
}

func TestSchemaNestedFieldCarriesXFile(t *testing.T) {
	m := schemaJSON(t)
	embeds := get(t, m, "properties/embeds").(map[string]any)
	if _, marked := embeds["x-file"]; marked {
		t.Error("x-file must sit on the nested field, not on the embeds array")
	}
	jsonEqual(t, get(t, m, "properties/embeds/items/properties/content"), `{"type": "string", "format": "uri", "x-file": true, "x-mcp-file": {"transferModes": ["inline", "upload"]}, "description": "the image"}`)
	jsonEqual(t, get(t, m, "properties/embeds/items/required"), `["name"]`)
	jsonEqual(t, get(t, m, "properties/format/enum"), `["pdf", "docx"]`)
}

func TestFileParamsDerivedFromType(t *testing.T) {
	_, params, err := InputSchema[schemaInput]()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"source", "optional", "sources", "embeds[].content"}
	if !reflect.DeepEqual(params, want) {
		t.Errorf("FileParams = %v, want %v", params, want)
	}
}

func TestSchemaRejectsUnsupportedTypes(t *testing.T) {
	type selfRef struct {
		Next *selfRef `json:"next,omitempty"`
	}
	if _, _, err := InputSchema[selfRef](); err == nil || !strings.Contains(err.Error(), "refers to itself") {
		t.Errorf("self-referencing type: err = %v", err)
	}
	type withChan struct {
		C chan int `json:"c"`
	}
	if _, _, err := InputSchema[withChan](); err == nil || !strings.Contains(err.Error(), "c: type chan int cannot be a tool parameter") {
		t.Errorf("chan field: err = %v", err)
	}
	if _, _, err := InputSchema[string](); err == nil || !strings.Contains(err.Error(), "must be a struct") {
		t.Errorf("non-struct: err = %v", err)
	}
}

func TestArgDecoderAcceptsBothFormsAndNormalises(t *testing.T) {
	dec, err := newArgDecoder(reflect.TypeFor[schemaInput]())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args string
		want schemaInput
	}{
		{"object", `{"source": {"name": "a.pdf", "content": "QUJD"}, "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"a.pdf", "QUJD"}, Format: "pdf"}},
		{"string", `{"source": "data:text/plain;base64,QUJD", "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"", "data:text/plain;base64,QUJD"}, Format: "pdf"}},
		{"bare file name, no URI", `{"source": "report.pdf", "sources": ["a b.png"], "embeds": [{"name": "c.png", "content": "c.png"}], "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"", "report.pdf"}, Sources: []FileAttachment{{"", "a b.png"}}, Embeds: []embedItem{{Name: "c.png", Content: "c.png"}}, Format: "pdf"}},
		{"optional in string form", `{"source": "QUJD", "optional": "QUJD", "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"", "QUJD"}, Optional: &FileAttachment{"", "QUJD"}, Format: "pdf"}},
		{"optional in object form", `{"source": "QUJD", "optional": {"name": "o.txt", "content": "QUJD"}, "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"", "QUJD"}, Optional: &FileAttachment{"o.txt", "QUJD"}, Format: "pdf"}},
		{"optional null is absent", `{"source": "QUJD", "optional": null, "sources": null, "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"", "QUJD"}, Format: "pdf"}},
		{"single object for an array", `{"source": "QUJD", "sources": {"name": "b.png", "content": "QUJD"}, "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"", "QUJD"}, Sources: []FileAttachment{{"b.png", "QUJD"}}, Format: "pdf"}},
		{"single string for an array", `{"source": "QUJD", "sources": "QUJD", "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"", "QUJD"}, Sources: []FileAttachment{{"", "QUJD"}}, Format: "pdf"}},
		{"strings in an array", `{"source": "QUJD", "sources": ["QUJD", {"name": "c", "content": "QUJD"}], "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"", "QUJD"}, Sources: []FileAttachment{{"", "QUJD"}, {"c", "QUJD"}}, Format: "pdf"}},
		{"data URI string for embeds", `{"source": "QUJD", "embeds": "data:image/png;name=chart.png;base64,QUJD", "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"", "QUJD"}, Embeds: []embedItem{{Name: "chart.png", Content: "data:image/png;name=chart.png;base64,QUJD"}}, Format: "pdf"}},
		{"single object for embeds", `{"source": "QUJD", "embeds": {"name": "chart.png"}, "format": "pdf"}`,
			schemaInput{Source: FileAttachment{"", "QUJD"}, Embeds: []embedItem{{Name: "chart.png"}}, Format: "pdf"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got schemaInput
			if err := dec.decode(json.RawMessage(tc.args), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestArgDecoderErrors(t *testing.T) {
	dec, _ := newArgDecoder(reflect.TypeFor[schemaInput]())
	cases := map[string]string{
		`{"format": "pdf"}`:                                      `required`,
		`{"source": 42, "format": "pdf"}`:                        `invalid arguments`,
		`{"source": {"name": "a"}, "format": "pdf"}`:             `invalid arguments`,
		`{"source": "QUJD", "format": "odt"}`:                    `enum`,
		`{"source": "QUJD", "format": "pdf", "surprise": true}`:  `invalid arguments`,
		`{"source": "QUJD", "format": "pdf", "sources": [1, 2]}`: `invalid arguments`,
		`not json`: `not valid JSON`,
	}
	for args, want := range cases {
		var got schemaInput
		err := dec.decode(json.RawMessage(args), &got)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to mention %q", args, err, want)
		}
	}
}

// Inline content is validated through a stand-in: neither the error of a
// failed anyOf branch nor a rejected call copies the content itself.
func TestArgDecoderDoesNotCopyLongContentIntoErrors(t *testing.T) {
	dec, _ := newArgDecoder(reflect.TypeFor[schemaInput]())
	content := strings.Repeat("QUJD", 1<<20) // 4 MiB of base64
	bad := `{"source": {"name": 5, "content": "` + content + `"}, "format": "pdf"}`
	var got schemaInput
	err := dec.decode(json.RawMessage(bad), &got)
	if err == nil {
		t.Fatal("a number was accepted as a file name")
	}
	if len(err.Error()) > 16<<10 || strings.Contains(err.Error(), "QUJDQUJDQUJD") {
		t.Errorf("the error holds the content (%d bytes): %.200s", len(err.Error()), err)
	}
	if !strings.Contains(err.Error(), "<string of 4194304 bytes>") {
		t.Errorf("the error does not say how long the content was: %.300s", err)
	}

	good := json.RawMessage(`{"source": "data:application/octet-stream;base64,` + content + `", "format": "pdf"}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := dec.decode(good, &got); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got.Source.Content != string(good[12:len(good)-19]) {
		t.Fatalf("content changed on the way: %d bytes", len(got.Source.Content))
	}
	// One generic decode, one re-encode (the string became an object) and the
	// typed decode: about three copies; the error messages of the failed
	// branch used to add two more.
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 4*uint64(len(content)) {
		t.Errorf("decoding %d bytes of arguments allocated %d bytes", len(good), grown)
	}
}

// The x-mcp-file declarations AddTool publishes: the tool's InputTypes where
// no accept tag is given, the agent's cap as maxSize; openai/fileParams
// names the top-level file arguments.
func TestSchemaMCPFileDeclarations(t *testing.T) {
	s, _, err := inputSchema(reflect.TypeFor[schemaInput](), fileDecl{accept: []string{"image/png"}, maxSize: 1234})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	var m map[string]any
	json.Unmarshal(b, &m)
	jsonEqual(t, get(t, m, "properties/source/x-mcp-file"), `{"accept": ["application/pdf", "image/*"], "maxSize": 1234, "transferModes": ["inline", "upload"]}`)
	jsonEqual(t, get(t, m, "properties/sources/items/x-mcp-file"), `{"accept": ["image/png"], "maxSize": 1234, "transferModes": ["inline", "upload"]}`)
	if got := mcpfile.FileParamNames([]string{"source", "optional", "sources", "embeds[].content", "opts.logo", "a[].b.c"}); !reflect.DeepEqual(got, []string{"source", "optional", "sources", "embeds"}) {
		t.Errorf("openai/fileParams = %v", got)
	}
	type bad struct {
		Title string `json:"title" accept:"image/png"`
	}
	if _, _, err := InputSchema[bad](); err == nil || !strings.Contains(err.Error(), "accept tag needs a file") {
		t.Errorf("accept on a string: %v", err)
	}
	type badType struct {
		Scan FileAttachment `json:"scan" accept:"pdf"`
	}
	if _, _, err := InputSchema[badType](); err == nil {
		t.Error("accept \"pdf\" taken")
	}
}
