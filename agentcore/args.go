package agentcore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/google/jsonschema-go/jsonschema"
)

// argDecoder turns the raw arguments of a tool call into the tool's input
// type: it normalises the forms models and hosts get slightly wrong, validates
// against the tool's schema, and decodes.
type argDecoder struct {
	typ      reflect.Type
	resolved *jsonschema.Resolved
	defaults bool // the schema gives defaults (SchemaTag)
}

// newArgDecoder returns the decoder of input type t, which validates against
// t's accepted schema (acceptedSchema): lenient where a file goes, while the
// published schema is §5's URI string.
func newArgDecoder(t reflect.Type) (*argDecoder, error) {
	s, err := acceptedSchema(t)
	if err != nil {
		return nil, err
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("resolve input schema: %w", err)
	}
	return &argDecoder{typ: t, resolved: r, defaults: hasDefaults(s)}, nil
}

// decode fills dst (a pointer to the input type) from raw.
func (d *argDecoder) decode(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	v, changed := normalize(d.typ, v)
	short, _ := shortenFileStrings(v, d.resolved.Schema())
	if err := d.resolved.Validate(short); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	if err := checkFormats(v, d.resolved.Schema(), "arguments"); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	if d.defaults {
		if err := d.resolved.ApplyDefaults(&v); err != nil {
			return fmt.Errorf("apply defaults: %w", err)
		}
		changed = true
	}
	if changed {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return fmt.Errorf("re-encode arguments: %w", err)
		}
	}
	v = nil // let the decoded copy go before decoding into dst
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

// longString is the length above which validation sees a stand-in for a
// string instead of the string itself.
const longString = 1 << 10

// Inline file content is a string of up to AGENT_MAX_UPLOAD_BYTES as base64.
// The validator tries every branch of an anyOf (a FileAttachment is an object
// or a string) and formats the value into the error of each branch that fails,
// so a 40 MB data URI used to cost several copies of itself in error messages
// alone. Validation therefore sees the long strings of file parameters as
// short stand-ins naming their length (shortenFileStrings); file parameters
// carry no length, pattern or format constraint, so the verdict is the same.

// shortenStrings returns v, or a copy of it in which every string longer
// than longString is replaced by a short stand-in naming its length, and
// reports whether it replaced anything; containers are copied only when something in them was.
func shortenStrings(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		if len(x) > longString {
			return fmt.Sprintf("<string of %d bytes>", len(x)), true
		}
	case map[string]any, []any:
		return replaceEach(v, func(_ string, e any) (any, bool) { return shortenStrings(e) })
	}
	return v, false
}

// replaceEach returns a copy of the object or array v in which f replaced
// the members it changed (f gets the member's key, "" for an array item),
// and whether it changed any; v itself, not copied, when f changed none.
func replaceEach(v any, f func(key string, e any) (any, bool)) (any, bool) {
	var cp any // the copy, made at the first change
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if ne, changed := f(k, e); changed {
				if cp == nil {
					cp = maps.Clone(x)
				}
				cp.(map[string]any)[k] = ne
			}
		}
	case []any:
		for i, e := range x {
			if ne, changed := f("", e); changed {
				if cp == nil {
					cp = slices.Clone(x)
				}
				cp.([]any)[i] = ne
			}
		}
	}
	if cp == nil {
		return v, false
	}
	return cp, true
}

// normalize adapts v (a decoded JSON value for Go type t) to the forms the
// schema promises, and reports whether it changed anything:
//   - a null object field is dropped (an optional parameter given as null is
//     an absent one);
//   - a single object or string given for an array of files, or of items that
//     hold files, becomes a one-item array;
//   - a string item of a file array becomes {"name": "", "content": s};
//   - a string given for an item struct with a FileContent field becomes that
//     struct with the string as its content (and name, if the struct has a
//     "name" field and the content carries one).
func normalize(t reflect.Type, v any) (any, bool) {
	switch t = deref(t); {
	case t == typeFileAttachment || t == typeFileContent:
		return v, false
	case t.Kind() == reflect.Slice:
		return normalizeSlice(t, v)
	case t.Kind() == reflect.Struct && t != typeTime:
		obj, ok := v.(map[string]any)
		if !ok {
			return v, false
		}
		changed := false
		for _, f := range jsonFields(t) {
			if fv, present := obj[f.name]; present && fv == nil {
				delete(obj, f.name)
				changed = true
			} else if nv, c := normalize(f.field.Type, fv); present && c {
				obj[f.name] = nv
				changed = true
			}
		}
		return obj, changed
	}
	return v, false
}

func normalizeSlice(t reflect.Type, v any) (any, bool) {
	elem := deref(t.Elem())
	changed := false
	arr, isArr := v.([]any)
	if !isArr {
		if !holdsFiles(elem) {
			return v, false
		}
		switch v.(type) {
		case string, map[string]any:
			arr, changed = []any{v}, true
		default:
			return v, false
		}
	}
	for i, item := range arr {
		if s, ok := item.(string); ok {
			switch {
			case elem == typeFileAttachment:
				arr[i], changed = map[string]any{"name": "", "content": s}, true
				continue
			case elem.Kind() == reflect.Struct:
				if obj := itemFromString(elem, s); obj != nil {
					arr[i], changed = obj, true
					continue
				}
			}
		}
		if nv, c := normalize(elem, item); c {
			arr[i], changed = nv, true
		}
	}
	return arr, changed
}

// holdsFiles reports whether values of t are files or structs with file fields.
func holdsFiles(t reflect.Type) bool {
	if t == typeFileAttachment || t == typeFileContent {
		return true
	}
	return t.Kind() == reflect.Struct && fileContentField(t) != ""
}

// fileContentField returns the JSON name of t's first FileContent or
// FileAttachment field, or "".
func fileContentField(t reflect.Type) string {
	for _, f := range jsonFields(t) {
		if ft := deref(f.field.Type); ft == typeFileContent || ft == typeFileAttachment {
			return f.name
		}
	}
	return ""
}

// itemFromString builds an item of struct type t from a bare string: the
// string is the item's file content, and its name (when t has a "name" field)
// is the one the content carries (a data URI's name= or a URL's last segment).
func itemFromString(t reflect.Type, s string) map[string]any {
	field := fileContentField(t)
	if field == "" {
		return nil
	}
	obj := map[string]any{field: s}
	for _, f := range jsonFields(t) {
		if f.name == "name" && f.field.Type.Kind() == reflect.String && f.name != field {
			obj["name"] = transport.NameFromContent(s)
		}
	}
	return obj
}
