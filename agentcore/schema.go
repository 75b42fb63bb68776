package agentcore

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
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

// InputSchema returns the input schema and file parameter paths AddTool derives
// from In, but for the tool's InputTypes and the agent's size cap.
func InputSchema[In any]() (*jsonschema.Schema, []string, error) {
	return inputSchema(reflect.TypeFor[In](), fileDecl{})
}

// The struct tags of a tool's parameters (docs/authoring.md).
const (
	AcceptTag = "accept" // the MIME types a file parameter accepts
	SchemaTag = "schema" // a parameter's JSON-schema constraints
)

// fileDecl is what a tool's file parameters say beyond the tags: the
// accept list of file parameters without a tag and maxSize, and what the
// transports say of a file (the description of its content, the draft's
// transfer modes: transport.Registry.Schema; the standard transports' when
// content is empty).
type fileDecl struct {
	accept  []string
	maxSize int64
	content string
	modes   []string
}

// Two schemas come from one input type. The published one (inputSchema,
// what tools/list shows) declares each file as SEP-2631 §5 wants it: a URI
// string property, {"type": "string", "format": "uri"}, marked x-file and
// x-mcp-file (on an array's items for a list of files). The accepted one
// (acceptedSchema, what the arguments are validated against) takes a
// FileAttachment in the seed's object form {name, content} too, and
// asserts no format on a file: models write names and paths, which the
// resolver judges and answers with a clearer error than a format would.

// inputSchema returns the published schema of t and its file parameters.
func inputSchema(t reflect.Type, decl fileDecl) (*jsonschema.Schema, []string, error) {
	return buildSchema(t, decl, false)
}

// acceptedSchema returns the schema the arguments of input type t are
// validated against: the published one, but for each FileAttachment an
// anyOf of the object {name, content} ($defs.FileAttachment) and a string,
// and no format on files.
func acceptedSchema(t reflect.Type) (*jsonschema.Schema, error) {
	s, _, err := buildSchema(t, fileDecl{}, true)
	return s, err
}

func buildSchema(t reflect.Type, decl fileDecl, accepted bool) (*jsonschema.Schema, []string, error) {
	if decl.content == "" {
		decl.content, decl.modes = transport.StandardSchema()
	}
	if t = deref(t); t.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("tool input type %v must be a struct", t)
	}
	g := &schemaGen{defs: map[string]*jsonschema.Schema{}, seen: map[reflect.Type]bool{}, decl: decl, accepted: accepted}
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
	decl       fileDecl
	accepted   bool // build the accepted schema, not the published one
}

// mcpFile is the x-mcp-file declaration of one file: the transports'
// transfer modes, the tool's accept list and the agent's cap, until a tag
// narrows accept.
func (g *schemaGen) mcpFile() mcpfile.Input {
	return mcpfile.Input{
		Accept:        g.decl.accept,
		MaxSize:       g.decl.maxSize,
		TransferModes: g.decl.modes,
	}
}

// fileAttachmentSchema is the schema of one FileAttachment value: in the
// published schema a URI string (§5), in the accepted one that or the
// object {name, content}. Both keep the object in $defs.FileAttachment,
// where the transports describe the content they take; the published
// schema references it nowhere (it documents the seed's typed form, which
// the agent takes in the string's place).
func (g *schemaGen) fileAttachmentSchema() *jsonschema.Schema {
	g.defs[fileAttachmentDef] = &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"name":    {Type: "string", Description: "Original file name, e.g. invoice.pdf"},
			"content": {Type: "string", Description: g.decl.content},
		},
		PropertyOrder: []string{"name", "content"},
		Required:      []string{"name", "content"},
	}
	if !g.accepted {
		return g.fileString()
	}
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		{Ref: "#/$defs/" + fileAttachmentDef},
		{Type: "string"},
	}}
}

// fileString is the schema of a file as a string: a URI string in the
// published schema (§5), any string in the accepted one.
func (g *schemaGen) fileString() *jsonschema.Schema {
	if g.accepted {
		return &jsonschema.Schema{Type: "string"}
	}
	return &jsonschema.Schema{Type: "string", Format: "uri"}
}

// setAccept narrows the accept list of the x-mcp-file declaration of fs (a
// file, or an array of files) to the comma-separated list of an accept tag.
func setAccept(fs *jsonschema.Schema, tag, path string) error {
	target := fs
	if _, ok := target.Extra[mcpfile.Keyword]; !ok && fs.Items != nil {
		target = fs.Items
	}
	decl, ok := target.Extra[mcpfile.Keyword].(mcpfile.Input)
	if !ok {
		return fmt.Errorf("%s: an accept tag needs a file parameter (FileAttachment, FileContent or a list of them)", path)
	}
	decl.Accept = nil
	for _, a := range strings.Split(tag, ",") {
		if a = strings.TrimSpace(a); a != "" {
			if !strings.HasPrefix(a, ".") && !strings.Contains(a, "/") {
				return fmt.Errorf("%s: accept %q is neither a MIME type (image/png, image/*) nor an extension (.png)", path, a)
			}
			decl.Accept = append(decl.Accept, a)
		}
	}
	target.Extra[mcpfile.Keyword] = decl
	return nil
}

// forType returns the schema of t; path is the JSON path of the value, used to
// list file parameters ("source", "sources", "embeds[].content").
func (g *schemaGen) forType(t reflect.Type, path string) (*jsonschema.Schema, error) {
	switch t = deref(t); t {
	case typeFileAttachment, typeFileContent:
		// A file (x-file), declared to the draft's hosts (x-mcp-file).
		g.fileParams = append(g.fileParams, path)
		s := g.fileString()
		if t == typeFileAttachment {
			s = g.fileAttachmentSchema()
		}
		s.Extra = map[string]any{transfer.KeywordFile: true, mcpfile.Keyword: g.mcpFile()}
		return s, nil
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
			return nil, fmt.Errorf("%s: map keys must be strings, not %v", cmp.Or(path, "input"), t.Key())
		}
		items, err := g.forType(t.Elem(), path+"{}")
		if err != nil {
			return nil, err
		}
		return &jsonschema.Schema{Type: "object", AdditionalProperties: items}, nil
	case reflect.Slice, reflect.Array:
		if deref(t.Elem()) == typeFileAttachment {
			// x-file on the array; each item is a FileAttachment (a URI
			// string as published), declared to the draft's hosts by
			// x-mcp-file (on the items, where the draft puts it for an
			// array).
			g.fileParams = append(g.fileParams, path)
			items := g.fileAttachmentSchema()
			items.Extra = map[string]any{mcpfile.Keyword: g.mcpFile()}
			return &jsonschema.Schema{Type: "array", Items: items, Extra: map[string]any{transfer.KeywordFile: true}}, nil
		}
		items, err := g.forType(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		return &jsonschema.Schema{Type: "array", Items: items}, nil
	case reflect.Struct:
		return g.forStruct(t, path)
	}
	return nil, fmt.Errorf("%s: type %v cannot be a tool parameter", cmp.Or(path, "input"), t)
}

func (g *schemaGen) forStruct(t reflect.Type, path string) (*jsonschema.Schema, error) {
	if g.seen[t] {
		return nil, fmt.Errorf("%s: type %v refers to itself; tool inputs must be trees", cmp.Or(path, "input"), t)
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
		fs.Description = cmp.Or(f.field.Tag.Get("jsonschema"), fs.Description)
		if e, ok := f.field.Tag.Lookup("enum"); ok {
			target := fs // a string field, or the items of a list of strings
			if fs.Type == "array" && fs.Items != nil {
				target = fs.Items
			}
			if target.Type != "string" || isFileNode(target) {
				return nil, fmt.Errorf("%s: an enum tag needs a string or a list of strings, not %v", fpath, f.field.Type)
			}
			for _, v := range strings.Split(e, ",") {
				target.Enum = append(target.Enum, strings.TrimSpace(v))
			}
		}
		if tag, ok := f.field.Tag.Lookup(SchemaTag); ok {
			if err := fileSchemaTag(fs, tag, fpath); err != nil {
				return nil, err
			}
			if err := applySchemaTag(fs, tag, fpath); err != nil {
				return nil, err
			}
		}
		if tag, ok := f.field.Tag.Lookup(AcceptTag); ok {
			if err := setAccept(fs, tag, fpath); err != nil {
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

// isFileNode reports whether s is the schema of one file (a FileAttachment,
// a FileContent, the items of a list of files).
func isFileNode(s *jsonschema.Schema) bool {
	_, declared := s.Extra[mcpfile.Keyword]
	return declared || s.Type != "array" && s.Extra[transfer.KeywordFile] == true
}

// fileSchemaTag refuses a schema tag on a file, whose constraints would
// judge the content (a data: URI, a URL, a path) and on which the
// published URI string (§5) and the accepted object would disagree; a list
// of files takes minItems and maxItems alone.
func fileSchemaTag(fs *jsonschema.Schema, tag, path string) error {
	list := fs.Type == "array" && fs.Items != nil && isFileNode(fs.Items)
	if !list && !isFileNode(fs) {
		return nil
	}
	for _, item := range strings.Split(tag, ";") {
		key, _, _ := strings.Cut(strings.TrimSpace(item), "=")
		if !list || key != "" && key != "minItems" && key != "maxItems" {
			return fmt.Errorf("%s: a schema tag does not apply to a file (a list of files may take minItems and maxItems)", path)
		}
	}
	return nil
}

// deref is t without its pointers.
func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
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
		name, rest, _ := strings.Cut(tag, ",")
		opts := strings.Split(rest, ",")
		optional := f.Type.Kind() == reflect.Pointer || slices.Contains(opts, "omitempty") || slices.Contains(opts, "omitzero")
		out = append(out, jsonField{field: f, name: cmp.Or(name, f.Name), required: !optional})
	}
	return out
}
