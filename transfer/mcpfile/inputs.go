package mcpfile

import (
	"encoding/json"
	"slices"
	"strings"
)

// Param is a file argument of a tool as a host reads it from the tool's
// declaration, the way the reference host reads it: an x-mcp-file object on
// a top-level property or on its items, merged with the names listed in
// _meta["openai/fileParams"].
type Param struct {
	// Name is the top-level argument.
	Name string
	// Input is the x-mcp-file object; zero for a parameter declared only
	// by openai/fileParams.
	Input Input
	// Declared reports an x-mcp-file object (Input is meaningful).
	Declared bool
	// Listed reports the name in _meta["openai/fileParams"].
	Listed bool
	// Array reports an array of files.
	Array bool
}

// Params reads the file parameters of a tool from its input schema and its
// _meta, both as decoded JSON (map[string]any). A boolean x-mcp-file, or an
// object that does not decode, declares nothing (the reference host ignores
// them too). Params are in the schema's property order where known, then in
// the order of openai/fileParams.
func Params(inputSchema, meta map[string]any) []Param {
	props, _ := inputSchema["properties"].(map[string]any)
	var out []Param
	index := map[string]int{}
	for _, name := range propertyNames(inputSchema, props) {
		prop, _ := props[name].(map[string]any)
		if prop == nil {
			continue
		}
		in, array, ok := declared(prop)
		if !ok {
			continue
		}
		index[name] = len(out)
		out = append(out, Param{Name: name, Input: in, Declared: true, Array: array})
	}
	list, _ := meta[MetaFileParams].([]any)
	for _, v := range list {
		name, _ := v.(string)
		if name == "" {
			continue
		}
		if i, ok := index[name]; ok {
			out[i].Listed = true
			continue
		}
		prop, _ := props[name].(map[string]any)
		index[name] = len(out)
		out = append(out, Param{Name: name, Listed: true, Array: isArray(prop)})
	}
	return out
}

// declared reads the x-mcp-file object of a property or of its items.
func declared(prop map[string]any) (Input, bool, bool) {
	array := isArray(prop)
	raw, ok := prop[Keyword].(map[string]any)
	if !ok {
		if items, _ := prop["items"].(map[string]any); items != nil {
			raw, ok = items[Keyword].(map[string]any)
		}
	}
	if !ok {
		return Input{}, false, false
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return Input{}, false, false
	}
	var in Input
	if json.Unmarshal(b, &in) != nil {
		// A malformed field (a negative maxSize, a mode that is not a
		// string) spoils only itself, as with the reference host.
		in = Input{}
		var loose struct {
			Accept        []any `json:"accept"`
			MaxSize       any   `json:"maxSize"`
			TransferModes []any `json:"transferModes"`
		}
		json.Unmarshal(b, &loose)
		for _, a := range loose.Accept {
			if s, ok := a.(string); ok && s != "" {
				in.Accept = append(in.Accept, s)
			}
		}
		if f, ok := loose.MaxSize.(float64); ok && f > 0 && f == float64(int64(f)) {
			in.MaxSize = int64(f)
		}
		for _, m := range loose.TransferModes {
			if s, ok := m.(string); ok {
				in.TransferModes = append(in.TransferModes, s)
			}
		}
	}
	if in.MaxSize < 0 {
		in.MaxSize = 0
	}
	in.TransferModes = slices.DeleteFunc(in.TransferModes, func(m string) bool { return m != ModeInline && m != ModeUpload })
	if raw["transferModes"] != nil && len(in.TransferModes) == 0 {
		// Listed, yet no mode this side knows: nothing is allowed, which
		// Allows must not read as "everything".
		in.TransferModes = []string{"none"}
	}
	return in, array, true
}

func isArray(prop map[string]any) bool {
	if prop == nil {
		return false
	}
	if t, _ := prop["type"].(string); t == "array" {
		return true
	}
	_, ok := prop["items"]
	return ok
}

// propertyNames lists the properties in the schema's order when it has one
// ("propertyOrder", which agentura's schemas carry), else sorted.
func propertyNames(schema, props map[string]any) []string {
	var names []string
	seen := map[string]bool{}
	if order, ok := schema["propertyOrder"].([]any); ok {
		for _, v := range order {
			if s, ok := v.(string); ok && props[s] != nil && !seen[s] {
				names = append(names, s)
				seen[s] = true
			}
		}
	}
	var rest []string
	for k := range props {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// FileParamNames lists, for _meta["openai/fileParams"] (MetaFileParams),
// the top-level arguments that take files, given the JSON paths of a
// tool's file parameters: a file ("source"), a list of files ("sources"),
// or a list of items holding one ("embeds" for "embeds[].content", whose
// items may each be given as the file alone). A file nested in an object
// argument has no top-level name and is left out.
func FileParamNames(paths []string) []string {
	var out []string
	for _, p := range paths {
		name, rest, nested := strings.Cut(p, "[]")
		if strings.Contains(name, ".") || nested && strings.Contains(strings.TrimPrefix(rest, "."), ".") {
			continue
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
