package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// lookup finds key in the registry or, when it is not there and
// Config.Resolve is set, asks Resolve.
func (m *Middleware) lookup(ctx context.Context, key string) (Entry, error) {
	e, err := m.cfg.Registry.Lookup(key)
	if err == nil || m.cfg.Resolve == nil || !errors.Is(err, ErrNotFound) {
		return e, err
	}
	return m.cfg.Resolve(ctx, key)
}

// notValues are the schema keywords whose values are data, not schemas:
// HostSchema does not look for file positions inside them.
var notValues = map[string]bool{"default": true, "examples": true, "const": true, "enum": true, "example": true}

// HostSchema returns a copy of a tool's input schema (the go-sdk's
// Tool.InputSchema) as a host that resolves file names shows it to its
// model: every file position (a node marked x-file or x-mcp-file, wherever it
// lies: a property, nested objects, array items, an embed's content, a
// $defs entry) becomes a string, or an array of strings where the position
// takes a list, whose description is the node's own followed by hint (say
// "a file name from this conversation or a path under /home/me"). The
// markers go, so the model is not asked for file contents, and so do the
// definitions ($defs, definitions) nothing references any more, such as the
// agent-side FileAttachment whose content a model must never write.
// Everything else of the schema is kept as it is.
func HostSchema(inputSchema any, hint string) (map[string]any, error) {
	b, err := json.Marshal(inputSchema)
	if err != nil {
		return nil, fmt.Errorf("read the tool's input schema: %w", err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("read the tool's input schema: %w", err)
	}
	if root == nil {
		root = map[string]any{"type": "object"}
	}
	s := &schema{root: root, files: map[uintptr]bool{}}
	// Decide every replacement before changing anything: a file node's
	// shape (one or a list) is read from its branches, which may be file
	// nodes too.
	type change struct {
		node map[string]any
		repl map[string]any
	}
	var changes []change
	walkSchema(root, 0, func(x map[string]any) bool {
		if isFile(x) {
			changes = append(changes, change{x, s.hostFile(x, hint)})
			return false
		}
		return true
	})
	for _, c := range changes {
		clear(c.node)
		for k, v := range c.repl {
			c.node[k] = v
		}
	}
	pruneDefinitions(root)
	return root, nil
}

// walkSchema calls fn on each object of the schema value v (at depth) and
// below, down to maxSchemaDepth, but not inside the keywords whose values
// are data (notValues), nor inside an object for which fn returns false.
func walkSchema(v any, depth int, fn func(map[string]any) bool) {
	if depth > maxSchemaDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if !fn(x) {
			return
		}
		for k, c := range x {
			if !notValues[k] {
				walkSchema(c, depth+1, fn)
			}
		}
	case []any:
		for _, c := range x {
			walkSchema(c, depth+1, fn)
		}
	}
}

// definitionKeys are the keywords under which a schema keeps definitions
// that "$ref"s name: 2020-12's and draft-07's.
var definitionKeys = []string{"$defs", "definitions"}

// pruneDefinitions removes from root's definitions every entry that no
// "$ref" reaches from the rest of the schema (directly, or through other
// definitions that are reached), and a definitions keyword left empty.
func pruneDefinitions(root map[string]any) {
	reached := map[string]bool{} // "#/$defs/X"
	var pending []string
	refs := func(v any) {
		walkSchema(v, 0, func(x map[string]any) bool {
			if r, ok := x["$ref"].(string); ok && !reached[r] {
				reached[r] = true
				pending = append(pending, r)
			}
			return true
		})
	}
	for k, v := range root {
		if k != "$defs" && k != "definitions" {
			refs(v)
		}
	}
	// A definition reached may name others.
	s := &schema{root: root}
	for len(pending) > 0 {
		r := pending[0]
		pending = pending[1:]
		if n := s.pointer(r); n != nil {
			refs(n)
		}
	}
	for _, key := range definitionKeys {
		defs, ok := root[key].(map[string]any)
		if !ok {
			continue
		}
		for name := range defs {
			if !reachedDefinition(reached, key, name) {
				delete(defs, name)
			}
		}
		if len(defs) == 0 {
			delete(root, key)
		}
	}
}

// reachedDefinition reports whether a reached "$ref" names the definition
// key/name or something inside it ("#/$defs/X/properties/y").
func reachedDefinition(reached map[string]bool, key, name string) bool {
	esc := strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
	prefix := "#/" + key + "/" + esc
	for r := range reached {
		if r == prefix || strings.HasPrefix(r, prefix+"/") {
			return true
		}
		if u, err := url.PathUnescape(r); err == nil && u != r && (u == prefix || strings.HasPrefix(u, prefix+"/")) {
			return true
		}
	}
	return false
}

// hostFile is what the file node n becomes in a host's schema.
func (s *schema) hostFile(n map[string]any, hint string) map[string]any {
	desc, _ := n["description"].(string)
	if desc = strings.TrimSpace(desc); desc != "" {
		desc = strings.TrimRight(desc, ".") + ": " + hint
	} else {
		desc = hint
	}
	out := map[string]any{}
	if title, ok := n["title"].(string); ok {
		out["title"] = title
	}
	if _, list := s.arrayItems(n); list {
		out["type"] = "array"
		out["items"] = map[string]any{"type": "string", "description": hint}
		out["description"] = desc + " (one name or path per item)"
		return out
	}
	out["type"] = "string"
	out["description"] = desc
	return out
}
