package a2abind

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/transfer"
	"github.com/google/jsonschema-go/jsonschema"
)

// a2aFile is a file part of an incoming message, as a FileAttachment's name
// and content: a data URI for inline bytes, the URI itself otherwise. The
// content then goes through the one resolver like any MCP file input. param
// is the file parameter the part's metadata names (transfer.A2AKeyFileParam),
// "" for the tool's first.
type a2aFile struct {
	name    string
	content string
	param   string
}

// a2aRequest is what an incoming message asks for.
type a2aRequest struct {
	skill string
	args  map[string]any
	files []a2aFile
}

// parseA2AMessage reads the skill, its arguments and the file parts of msg.
// inline holds the file parts with bytes taken out of the message on arrival
// (see a2aInterceptor.Before), by part index.
func parseA2AMessage(msg *a2a.Message, inline map[int]a2a.FilePart) (*a2aRequest, error) {
	if msg == nil {
		return nil, errors.New("the request has no message")
	}
	req := &a2aRequest{}
	named := false
	for i, p := range msg.Parts {
		if fp, ok := inline[i]; ok {
			req.files = append(req.files, fileOfPart(fp))
			delete(inline, i) // the argument holds it now; let the stash go
			continue
		}
		if dp, ok := tasks.PartOf[a2a.DataPart](p); ok {
			if err := req.takeData(dp.Data, &named); err != nil {
				return nil, err
			}
		} else if fp, ok := tasks.PartOf[a2a.FilePart](p); ok {
			req.files = append(req.files, fileOfPart(fp))
		}
	}
	if !named {
		return nil, errors.New(`the message names no skill: add a data part {"kind": "data", "data": {"skill": "<skill id from the agent card>", "arguments": {...}}}`)
	}
	return req, nil
}

func (r *a2aRequest) takeData(data map[string]any, named *bool) error {
	raw, ok := data[transfer.A2AKeySkill]
	if !ok {
		return nil // a data part for someone else; not ours to judge
	}
	skill, ok := raw.(string)
	if !ok || strings.TrimSpace(skill) == "" {
		return errors.New(`"skill" in the data part must be the id of a skill (a string)`)
	}
	if *named {
		return errors.New("the message names a skill in more than one data part; send one call per message")
	}
	*named = true
	r.skill = strings.TrimSpace(skill)
	switch a := data[transfer.A2AKeyArguments].(type) {
	case nil:
		r.args = map[string]any{}
	case map[string]any:
		r.args = a
	default:
		return fmt.Errorf(`"arguments" in the data part must be an object, not %T`, a)
	}
	return nil
}

func fileOfPart(p a2a.FilePart) a2aFile {
	param, _ := p.Metadata[transfer.A2AKeyFileParam].(string)
	if f, ok := tasks.PartOf[a2a.FileURI](p.File); ok {
		return a2aFile{name: f.Name, content: f.URI, param: param}
	}
	if f, ok := tasks.PartOf[a2a.FileBytes](p.File); ok {
		return a2aFile{name: f.Name, content: dataURI(f), param: param}
	}
	return a2aFile{param: param}
}

// dataURI turns inline bytes (base64 by the A2A spec) into a data URI that
// keeps the MIME type and the name, for the resolver (transfer.DataURIPrefix:
// only the media type of a caller's MIME type is kept).
func dataURI(f a2a.FileBytes) string {
	return transfer.DataURIPrefix(f.MimeType, f.Name) + f.Bytes
}

// arguments fills the tool's file parameters with the message's files and
// returns the JSON arguments. A file part fills the parameter its metadata
// names (transfer.A2AKeyFileParam: an entry of calls.Tool.FileParams, or
// its top-level name), else the first one. A single parameter takes
// exactly one file, an array all of its files, in order, and an array of
// items with a file field gets one item per file.
func (r *a2aRequest) arguments(def calls.Tool) (json.RawMessage, error) {
	// A copy: the message's own map belongs to the task's history, which
	// a2a-go reads as the call runs.
	args := make(map[string]any, len(r.args)+1)
	maps.Copy(args, r.args)
	if len(def.FileParams) == 0 {
		if len(r.files) > 0 {
			return nil, fmt.Errorf("skill %s takes no files, but the message has %d file part(s); remove them", def.Name, len(r.files))
		}
		return json.Marshal(args)
	}
	byParam := map[string][]a2aFile{}
	for _, f := range r.files {
		fp := def.FileParams[0]
		if f.param != "" {
			i := slices.IndexFunc(def.FileParams, func(p string) bool {
				top, _, _ := strings.Cut(p, "[]")
				return p == f.param || top == f.param
			})
			if i < 0 {
				return nil, fmt.Errorf("skill %s has no file parameter %q (the metadata %q of the file part %q); its file parameters are %v", def.Name, f.param, transfer.A2AKeyFileParam, f.name, def.FileParams)
			}
			fp = def.FileParams[i]
		}
		byParam[fp] = append(byParam[fp], f)
	}
	for n, fp := range def.FileParams {
		if err := fillFileParam(def, args, fp, n == 0, byParam[fp]); err != nil {
			return nil, err
		}
	}
	return json.Marshal(args)
}

// fillFileParam sets the file parameter fp (an entry of def.FileParams;
// first: the one file parts without a name in their metadata fill) of
// args from files.
func fillFileParam(def calls.Tool, args map[string]any, fp string, first bool, files []a2aFile) error {
	param, field, inItems := strings.Cut(fp, "[].")
	schema := def.InputSchema
	if def.ArgsSchema != nil { // a FileAttachment takes {name, content} there
		schema = def.ArgsSchema
	}
	prop := propertyOf(schema, param)
	if len(files) == 0 {
		if _, given := args[param]; !given && required(def.InputSchema, param) {
			named := ""
			if !first {
				named = fmt.Sprintf(`, "metadata": {%q: %q}`, transfer.A2AKeyFileParam, param)
			}
			return fmt.Errorf("skill %s needs a file for %q: add a file part {\"kind\": \"file\", \"file\": {\"name\": \"report.pdf\", \"mimeType\": \"application/pdf\", \"bytes\": \"<base64>\"}%s} (or \"uri\" instead of \"bytes\")", def.Name, param, named)
		}
		return nil
	}
	if _, given := args[param]; given {
		return fmt.Errorf("skill %s: the file for %q is given twice, in the arguments and as file part(s); send it one way", def.Name, param)
	}
	if prop == nil || strings.ContainsAny(param, ".{") || (inItems && strings.ContainsAny(field, ".[{")) {
		return fmt.Errorf("skill %s: its file parameter %q cannot be filled from file parts; give it in the arguments as {\"name\", \"content\"} with a data URI or URL", def.Name, fp)
	}
	isArray := prop.Type == "array"
	switch {
	case inItems:
		items := make([]any, len(files))
		named := prop.Items != nil && propertyOf(prop.Items, "name") != nil && field != "name"
		for i, f := range files {
			item := map[string]any{field: f.content}
			if named {
				item["name"] = f.name
			}
			items[i] = item
		}
		args[param] = items
	case isArray:
		items := make([]any, len(files))
		for i, f := range files {
			items[i] = map[string]any{"name": f.name, "content": f.content}
		}
		args[param] = items
	default:
		if len(files) > 1 {
			return fmt.Errorf("skill %s takes one file in %q, but the message has %d file parts for it; send one", def.Name, param, len(files))
		}
		f := files[0]
		if prop.Type == "string" { // a FileContent parameter: the content alone
			args[param] = f.content
		} else {
			args[param] = map[string]any{"name": f.name, "content": f.content}
		}
	}
	return nil
}

func propertyOf(s *jsonschema.Schema, name string) *jsonschema.Schema {
	if s == nil || s.Properties == nil {
		return nil
	}
	return s.Properties[name]
}

func required(s *jsonschema.Schema, name string) bool {
	return s != nil && slices.Contains(s.Required, name)
}
