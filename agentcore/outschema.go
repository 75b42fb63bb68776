package agentcore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// TypedToolFunc is a tool with a typed output: out is the structured content,
// res (may be nil) gives the text and the files.
type TypedToolFunc[In, Out any] func(ctx context.Context, call *Call, in In) (out Out, res *Result, err error)

// AddTypedTool is AddTool for a handler with a typed output Out, a struct
// without file fields, whose schema becomes the tool's outputSchema.
func AddTypedTool[In, Out any](s *Service, t Tool, fn TypedToolFunc[In, Out]) {
	out, err := outputSchema[Out]()
	switch {
	case fn == nil:
		err = fmt.Errorf("tool has no function")
	case err == nil:
		err = addTool(s, t, func(ctx context.Context, call *Call, in In) (*Result, error) {
			v, res, err := fn(ctx, call, in)
			if err != nil {
				return nil, err
			}
			res = cmp.Or(res, &Result{})
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("tool %s: encode its output: %w", t.Name, err)
			}
			res.Data = nil
			if err := json.Unmarshal(raw, &res.Data); err != nil {
				return nil, fmt.Errorf("tool %s: its output must encode as a JSON object: %w", t.Name, err)
			}
			return res, nil
		}, out)
	}
	if err != nil {
		panic(fmt.Sprintf("agentcore.AddTypedTool %q: %v", t.Name, err))
	}
}

// outputSchema returns the output schema of a typed tool returning Out
// (see AddTypedTool).
func outputSchema[Out any]() (*jsonschema.Schema, error) {
	t := deref(reflect.TypeFor[Out]())
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tool output type %v must be a struct", t)
	}
	s, files, err := inputSchema(t, fileDecl{})
	if err != nil {
		return nil, err
	}
	if len(files) > 0 {
		return nil, fmt.Errorf("tool output type %v holds file parameters %v; hand files out with Call.FileResponse instead", t, files)
	}
	// A field of Out may share a file field's name (a tool describing a
	// file without producing one) if it has the same type; a produced file
	// then fills it.
	fields := fileFields()
	for _, name := range fileFieldOrder {
		if own, taken := s.Properties[name]; taken {
			if own.Type != fields[name].Type {
				return nil, fmt.Errorf("tool output type %v has a field %q of type %s; a produced file's %s is a %s", t, name, own.Type, name, fields[name].Type)
			}
			continue
		}
		s.Properties[name] = fields[name]
		s.PropertyOrder = append(s.PropertyOrder, name)
	}
	if _, taken := s.Properties["files"]; taken {
		return nil, fmt.Errorf("tool output type %v has a field \"files\", which lists the produced files", t)
	}
	s.Properties["files"] = &jsonschema.Schema{Type: "array", Description: "the produced files, when there are several",
		Items: &jsonschema.Schema{Type: "object", Properties: fileFields(), PropertyOrder: fileFieldOrder, Required: []string{"download_url", "filename", "mime_type", "size_bytes"}}}
	s.PropertyOrder = append(s.PropertyOrder, "files")
	return s, nil
}

// fileFieldOrder are the fields of a produced file, in order.
var fileFieldOrder = []string{"download_url", "filename", "mime_type", "size_bytes", "sha256", "file"}

// fileFields are the schemas of a produced file's fields (transfer.File).
func fileFields() map[string]*jsonschema.Schema {
	return map[string]*jsonschema.Schema{
		"download_url": {Type: "string", Format: "uri", Description: "signed, expiring download URL"},
		"filename":     {Type: "string", Description: "display name"},
		"mime_type":    {Type: "string"},
		"size_bytes":   {Type: "integer", Minimum: new(float64)},
		"sha256":       {Type: "string", Pattern: "^[0-9a-f]{64}$", Description: "hex digest of the content"},
		"file": {Type: "object", Description: "the file as the draft MCP file contract (SEP-2631) hands it out: resolve uri with files/authorizeDownload",
			Properties: map[string]*jsonschema.Schema{
				"uri":      {Type: "string", Format: "uri"},
				"name":     {Type: "string"},
				"mimeType": {Type: "string"},
				"size":     {Type: "integer", Minimum: new(float64)},
				"digest": {Type: "object", Required: []string{"algorithm", "value"}, Properties: map[string]*jsonschema.Schema{
					"algorithm": {Type: "string"}, "value": {Type: "string"}}},
			},
			PropertyOrder: []string{"uri", "name", "mimeType", "size", "digest"},
			Required:      []string{"uri"}},
	}
}
