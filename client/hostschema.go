package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// markers go, so the model is not asked for file contents. Everything else
// of the schema is kept as it is.
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
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > maxSchemaDepth {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if isFile(x) {
				changes = append(changes, change{x, s.hostFile(x, hint)})
				return
			}
			for k, c := range x {
				if !notValues[k] {
					walk(c, depth+1)
				}
			}
		case []any:
			for _, c := range x {
				walk(c, depth+1)
			}
		}
	}
	walk(root, 0)
	for _, c := range changes {
		clear(c.node)
		for k, v := range c.repl {
			c.node[k] = v
		}
	}
	return root, nil
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
