package client

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/agentura/agentura/transfer"
)

// maxSchemaDepth bounds the walk of a schema (and of $ref chains), so a
// recursive or hostile schema cannot loop.
const maxSchemaDepth = 64

// schema is a JSON schema as decoded into generic maps, with the root kept
// to resolve "$ref"s against.
type schema struct {
	root map[string]any
	// files caches hasFiles by node: a schema is walked per value, and
	// recursive schemas are common (tree types).
	files map[uintptr]bool
}

// parseSchema turns a tool's input schema (whatever type the go-sdk holds it
// in) into generic maps.
func parseSchema(s any) (*schema, error) {
	var m map[string]any
	switch v := s.(type) {
	case nil:
		m = map[string]any{}
	case map[string]any:
		m = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("read the tool's input schema: %w", err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("read the tool's input schema: %w", err)
		}
	}
	return &schema{root: m, files: map[uintptr]bool{}}, nil
}

// deref follows "$ref"s ("#/$defs/X", "#/definitions/X", any local JSON
// pointer) to the schema they name; unknown or remote refs yield nil.
func (s *schema) deref(n map[string]any) map[string]any {
	for i := 0; n != nil && i < maxSchemaDepth; i++ {
		ref, ok := n["$ref"].(string)
		if !ok {
			return n
		}
		n = s.pointer(ref)
	}
	return n
}

// pointer resolves a local JSON pointer such as "#/$defs/FileAttachment".
func (s *schema) pointer(ref string) map[string]any {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return nil
	}
	var cur any = s.root
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	m, _ := cur.(map[string]any)
	return m
}

// isFile reports whether node carries x-file or x-mcp-file with a value
// other than false.
func isFile(n map[string]any) bool {
	for _, k := range []string{transfer.KeywordFile, transfer.KeywordMCPFile} {
		if v, ok := n[k]; ok && v != nil && v != false {
			return true
		}
	}
	return false
}

// branches returns the sub-schemas of anyOf, oneOf and allOf.
func branches(n map[string]any) []map[string]any {
	var out []map[string]any
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		list, _ := n[k].([]any)
		for _, b := range list {
			if m, ok := b.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// hasType reports whether node's "type" names t (a string or a list).
func hasType(n map[string]any, t string) bool {
	switch v := n["type"].(type) {
	case string:
		return v == t
	case []any:
		for _, x := range v {
			if x == t {
				return true
			}
		}
	}
	return false
}

// isArray reports whether node describes an array.
func isArray(n map[string]any) bool {
	_, items := n["items"]
	return hasType(n, "array") || items
}

// isObject reports whether node describes an object.
func isObject(n map[string]any) bool {
	_, props := n["properties"]
	return hasType(n, "object") || props
}

// acceptsObject reports whether a value of node may be an object, itself or
// through one of its branches.
func (s *schema) acceptsObject(n map[string]any) bool {
	return s.branchWhere(n, isObject) != nil
}

// branchWhere returns the first of node and its branches, depth first,
// that ok accepts; each node is looked at once, so branches that name
// themselves end.
func (s *schema) branchWhere(n map[string]any, ok func(map[string]any) bool) map[string]any {
	seen := map[uintptr]bool{}
	var walk func(m map[string]any) map[string]any
	walk = func(m map[string]any) map[string]any {
		m = s.deref(m)
		if m == nil || seen[nodeKey(m)] {
			return nil
		}
		seen[nodeKey(m)] = true
		if ok(m) {
			return m
		}
		for _, b := range branches(m) {
			if found := walk(b); found != nil {
				return found
			}
		}
		return nil
	}
	return walk(n)
}

// hasFiles reports whether node or anything below it is a file field. It
// searches the schema as the graph it is, each node once: a recursive
// schema has cycles, and the paths of a tree type (a node with two
// children of its own type) double with every level.
func (s *schema) hasFiles(n map[string]any) bool {
	n = s.deref(n)
	if n == nil {
		return false
	}
	start := nodeKey(n)
	if v, ok := s.files[start]; ok {
		return v
	}
	seen := map[uintptr]bool{}
	var reach func(m map[string]any) bool
	reach = func(m map[string]any) bool {
		m = s.deref(m)
		if m == nil {
			return false
		}
		k := nodeKey(m)
		if seen[k] {
			return false
		}
		seen[k] = true
		if v, ok := s.files[k]; ok { // a complete answer of an earlier search
			return v
		}
		if isFile(m) {
			return true
		}
		for _, c := range children(m) {
			if reach(c) {
				return true
			}
		}
		return false
	}
	found := reach(n)
	s.files[start] = found
	return found
}

// children are the sub-schemas of node: items, properties and branches.
func children(n map[string]any) []map[string]any {
	var out []map[string]any
	if items, ok := n["items"].(map[string]any); ok {
		out = append(out, items)
	}
	props, _ := n["properties"].(map[string]any)
	for _, k := range sortedKeys(props) {
		if pm, ok := props[k].(map[string]any); ok {
			out = append(out, pm)
		}
	}
	return append(out, branches(n)...)
}

// nodeKey identifies a decoded schema node (a map) by its identity.
func nodeKey(n map[string]any) uintptr { return reflect.ValueOf(n).Pointer() }

// FileField is a file parameter found in a tool's input schema.
type FileField struct {
	// Path names the field: "source", "sources" (a list marked x-file as a
	// whole), "embeds[].content" (a field of the items of a list).
	Path string
	// Array is true when the field takes a list of files.
	Array bool
}

// FileFields lists the file fields of a tool's input schema (the go-sdk's
// Tool.InputSchema), properties in name order, walking $ref/$defs,
// anyOf/oneOf/allOf, arrays and nested objects.
func FileFields(inputSchema any) ([]FileField, error) {
	s, err := parseSchema(inputSchema)
	if err != nil {
		return nil, err
	}
	var out []FileField
	seen := map[string]bool{}
	s.collect(s.root, "", 0, seen, map[uintptr]bool{}, &out)
	return out, nil
}

// collect lists the file fields below n. A node already on the path is not
// entered again: a recursive type's fields are listed at its first level.
func (s *schema) collect(n map[string]any, at string, depth int, seen map[string]bool, onPath map[uintptr]bool, out *[]FileField) {
	n = s.deref(n)
	if n == nil || depth > maxSchemaDepth || !s.hasFiles(n) || onPath[nodeKey(n)] {
		return
	}
	onPath[nodeKey(n)] = true
	defer delete(onPath, nodeKey(n))
	if isFile(n) {
		if !seen[at] {
			seen[at] = true
			_, list := s.arrayItems(n)
			*out = append(*out, FileField{Path: at, Array: list})
		}
		return
	}
	if items, ok := n["items"].(map[string]any); ok {
		s.collect(items, at+"[]", depth+1, seen, onPath, out)
	}
	props, _ := n["properties"].(map[string]any)
	for _, k := range sortedKeys(props) {
		if pm, ok := props[k].(map[string]any); ok {
			s.collect(pm, joinPath(at, k), depth+1, seen, onPath, out)
		}
	}
	for _, b := range branches(n) {
		s.collect(b, at, depth+1, seen, onPath, out)
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// arrayItems returns the item schema of node when node, or one of its
// branches, describes an array.
func (s *schema) arrayItems(n map[string]any) (map[string]any, bool) {
	a := s.branchWhere(n, isArray)
	if a == nil {
		return nil, false
	}
	items, _ := a["items"].(map[string]any)
	return items, true
}

// acceptsSingle reports whether node, or one of its branches, takes a single
// file: an object or a string rather than an array (or null).
func (s *schema) acceptsSingle(n map[string]any) bool {
	return s.branchWhere(n, func(m map[string]any) bool { return isObject(m) || hasType(m, "string") }) != nil
}
