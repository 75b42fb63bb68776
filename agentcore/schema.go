package agentcore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/agentura/agentura/transfer"
	"github.com/google/jsonschema-go/jsonschema"
)

// fileAttachmentDef is the name of the FileAttachment definition in $defs.
const fileAttachmentDef = "FileAttachment"

var (
	typeFileAttachment = reflect.TypeFor[FileAttachment]()
	typeFileContent    = reflect.TypeFor[FileContent]()
	typeTime           = reflect.TypeFor[time.Time]()
	typeRawMessage     = reflect.TypeFor[json.RawMessage]()
)

// InputSchema returns the JSON schema of tool input type In and the paths of
// its file parameters (see [ToolDef.FileParams]). In must be a struct.
//
// Struct fields are named by their json tags; fields tagged omitempty or
// omitzero, and pointer fields, are optional. A `jsonschema:"..."` tag is the
// field's description, an `enum:"a,b,c"` tag restricts a string field, and a
// `schema:"..."` tag (SchemaTag) gives default, examples, bounds, lengths,
// pattern and format.
// FileAttachment, *FileAttachment and []FileAttachment fields get the file
// parameter schema marked "x-file"; FileContent fields are strings marked
// "x-file".
func InputSchema[In any]() (*jsonschema.Schema, []string, error) {
	return inputSchema(reflect.TypeFor[In]())
}

func inputSchema(t reflect.Type) (*jsonschema.Schema, []string, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("tool input type %v must be a struct", t)
	}
	g := &schemaGen{defs: map[string]*jsonschema.Schema{}, seen: map[reflect.Type]bool{}}
	s, err := g.forType(t, "")
	if err != nil {
		return nil, nil, err
	}
	if len(g.defs) > 0 {
		s.Defs = g.defs
	}
	return s, g.fileParams, nil
}

type schemaGen struct {
	defs       map[string]*jsonschema.Schema
	seen       map[reflect.Type]bool
	fileParams []string
}

// fileAttachmentSchema is the schema of one FileAttachment value, object or string.
func (g *schemaGen) fileAttachmentSchema() *jsonschema.Schema {
	g.defs[fileAttachmentDef] = &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"name":    {Type: "string", Description: "Original file name, e.g. invoice.pdf"},
			"content": {Type: "string", Description: "The file: data URI, http(s) URL, path under an input root, or base64"},
		},
		PropertyOrder: []string{"name", "content"},
		Required:      []string{"name", "content"},
	}
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		{Ref: "#/$defs/" + fileAttachmentDef},
		{Type: "string"},
	}}
}

func markFile(s *jsonschema.Schema) *jsonschema.Schema {
	if s.Extra == nil {
		s.Extra = map[string]any{}
	}
	s.Extra[transfer.KeywordFile] = true
	s.Extra[transfer.KeywordMCPFile] = true
	return s
}

// forType returns the schema of t; path is the JSON path of the value, used to
// list file parameters ("source", "sources", "embeds[].content").
func (g *schemaGen) forType(t reflect.Type, path string) (*jsonschema.Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case typeFileAttachment:
		g.fileParams = append(g.fileParams, path)
		return markFile(g.fileAttachmentSchema()), nil
	case typeFileContent:
		g.fileParams = append(g.fileParams, path)
		return markFile(&jsonschema.Schema{Type: "string"}), nil
	case typeTime:
		return &jsonschema.Schema{Type: "string", Format: "date-time"}, nil
	case typeRawMessage:
		return &jsonschema.Schema{}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return &jsonschema.Schema{Type: "string"}, nil
	case reflect.Bool:
		return &jsonschema.Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &jsonschema.Schema{Type: "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &jsonschema.Schema{Type: "integer", Minimum: new(float64)}, nil
	case reflect.Float32, reflect.Float64:
		return &jsonschema.Schema{Type: "number"}, nil
	case reflect.Interface:
		return &jsonschema.Schema{}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: map keys must be strings, not %v", pathOrRoot(path), t.Key())
		}
		items, err := g.forType(t.Elem(), path+"{}")
		if err != nil {
			return nil, err
		}
		return &jsonschema.Schema{Type: "object", AdditionalProperties: items}, nil
	case reflect.Slice, reflect.Array:
		elem := t.Elem()
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		if elem == typeFileAttachment {
			// x-file on the array; items are FileAttachment objects.
			g.fileParams = append(g.fileParams, path)
			g.fileAttachmentSchema()
			return markFile(&jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Ref: "#/$defs/" + fileAttachmentDef}}), nil
		}
		items, err := g.forType(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		return &jsonschema.Schema{Type: "array", Items: items}, nil
	case reflect.Struct:
		return g.forStruct(t, path)
	}
	return nil, fmt.Errorf("%s: type %v cannot be a tool parameter", pathOrRoot(path), t)
}

func (g *schemaGen) forStruct(t reflect.Type, path string) (*jsonschema.Schema, error) {
	if g.seen[t] {
		return nil, fmt.Errorf("%s: type %v refers to itself; tool inputs must be trees", pathOrRoot(path), t)
	}
	g.seen[t] = true
	defer delete(g.seen, t)

	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, f := range jsonFields(t) {
		fpath := f.name
		if path != "" {
			fpath = path + "." + f.name
		}
		fs, err := g.forType(f.field.Type, fpath)
		if err != nil {
			return nil, err
		}
		if d := f.field.Tag.Get("jsonschema"); d != "" {
			fs.Description = d
		}
		if e, ok := f.field.Tag.Lookup("enum"); ok {
			target := fs // a string field, or the items of a list of strings
			if fs.Type == "array" && fs.Items != nil {
				target = fs.Items
			}
			if target.Type != "string" {
				return nil, fmt.Errorf("%s: an enum tag needs a string or a list of strings, not %v", fpath, f.field.Type)
			}
			for _, v := range strings.Split(e, ",") {
				target.Enum = append(target.Enum, strings.TrimSpace(v))
			}
		}
		if tag, ok := f.field.Tag.Lookup(SchemaTag); ok {
			if err := applySchemaTag(fs, tag, fpath); err != nil {
				return nil, err
			}
		}
		s.Properties[f.name] = fs
		s.PropertyOrder = append(s.PropertyOrder, f.name)
		if f.required {
			s.Required = append(s.Required, f.name)
		}
	}
	s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	return s, nil
}

func pathOrRoot(p string) string {
	if p == "" {
		return "input"
	}
	return p
}

// jsonField is an exported struct field as encoding/json sees it.
type jsonField struct {
	field    reflect.StructField
	name     string
	required bool
}

// jsonFields lists the fields encoding/json would encode, with their names.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		optional := f.Type.Kind() == reflect.Pointer
		for _, o := range strings.Split(opts, ",") {
			if o == "omitempty" || o == "omitzero" {
				optional = true
			}
		}
		out = append(out, jsonField{field: f, name: name, required: !optional})
	}
	return out
}
