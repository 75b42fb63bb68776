package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
)

// fileSender turns the registry file a model named into what goes over the
// wire: a data URI, the signed URL of an upload, or a file URI of the draft
// MCP file contract. name is the name to send along (the registry name when
// the model gave none).
type fileSender func(ctx context.Context, key string, f fileField) (content, name string, err error)

// fileField is what the schema says of a file field.
type fileField struct {
	// decl is its x-mcp-file declaration; nil when it has none.
	decl *mcpfile.Input
	// object: it takes {name, content} (an agentura agent's FileAttachment).
	object bool
	// xfile: it is marked x-file, agentura's contract, which /uploads and
	// tus serve (the draft's declaration then only bounds what is sent).
	xfile bool
}

// rewriter replaces the file names in a tool's arguments with the files,
// guided by the tool's input schema.
type rewriter struct {
	s    *schema
	send fileSender
	// refuseLiterals refuses content that already is a file (a data: URI
	// or a URL) instead of passing it on (Config.RefuseLiterals).
	refuseLiterals bool
}

// ErrLiteralFile is wrapped by the error of a data: URI or URL written
// where a file name goes, under Config.RefuseLiterals.
var ErrLiteralFile = errors.New("a data: URI or URL written in place of a file name")

// rewriteArgs returns args with every file field resolved. args is the
// decoded JSON of the arguments (maps, slices, strings, json.Number, ...).
func (w *rewriter) rewriteArgs(ctx context.Context, args any) (any, error) {
	return w.value(ctx, args, w.s.root, "", 0)
}

func (w *rewriter) value(ctx context.Context, v any, n map[string]any, at string, depth int) (any, error) {
	n = w.s.deref(n)
	if n == nil || v == nil || depth > maxSchemaDepth || !w.s.hasFiles(n) {
		return v, nil
	}
	if isFile(n) {
		return w.file(ctx, v, n, at)
	}
	if bs := branches(n); len(bs) > 0 {
		if b := w.pick(v, bs); b != nil {
			var err error
			if v, err = w.value(ctx, v, b, at, depth+1); err != nil {
				return nil, err
			}
		}
	}
	if isArray(n) {
		items, _ := n["items"].(map[string]any)
		list, ok := v.([]any)
		if !ok {
			list = []any{v} // "chart.png" for a list of items: one item
		}
		for i, item := range list {
			nv, err := w.value(ctx, item, items, fmt.Sprintf("%s[%d]", at, i), depth+1)
			if err != nil {
				return nil, err
			}
			list[i] = nv
		}
		v = list
	}
	if name, ok := v.(string); ok && isObject(n) && w.namedItem(n) {
		v = map[string]any{"name": name} // "chart.png" for an item {name, content}
	}
	if obj, ok := v.(map[string]any); ok && isObject(n) {
		props, _ := n["properties"].(map[string]any)
		for _, k := range sortedKeys(props) {
			pn, _ := props[k].(map[string]any)
			pn = w.s.deref(pn)
			if pn == nil || !w.s.hasFiles(pn) {
				continue
			}
			p := joinPath(at, k)
			cur, present := obj[k]
			if s, _ := cur.(string); isFile(pn) && !isArray(pn) && !w.s.acceptsObject(pn) && s == "" {
				// An item's file field left empty: the item's name is the reference.
				if name, _ := obj["name"].(string); name != "" {
					cur, present = name, true
				}
			}
			if !present {
				continue
			}
			nv, err := w.value(ctx, cur, pn, p, depth+1)
			if err != nil {
				return nil, err
			}
			obj[k] = nv
		}
	}
	return v, nil
}

// pick chooses the branch of anyOf/oneOf that carries files and fits v's
// kind; a lone value where only an array branch carries files picks that
// branch, so it becomes a list of one.
func (w *rewriter) pick(v any, bs []map[string]any) map[string]any {
	var arrayBranch map[string]any
	for _, b := range bs {
		d := w.s.deref(b)
		if d == nil || !w.s.hasFiles(d) {
			continue
		}
		if isFile(d) {
			return b
		}
		switch v.(type) {
		case []any:
			if isArray(d) {
				return b
			}
		case map[string]any:
			if isObject(d) {
				return b
			}
		}
		if isArray(d) && arrayBranch == nil {
			arrayBranch = b
		}
	}
	return arrayBranch
}

// file resolves a field marked x-file: one file, or a list of them. A
// lone value for a field that only takes lists becomes a list of one.
func (w *rewriter) file(ctx context.Context, v any, n map[string]any, at string) (any, error) {
	xfile := n[transfer.KeywordFile] == true
	items, isList := w.s.arrayItems(n)
	if !isList {
		return w.one(ctx, v, n, at, xfile)
	}
	list, ok := v.([]any)
	if !ok {
		if w.s.acceptsSingle(n) {
			return w.one(ctx, v, n, at, xfile)
		}
		list = []any{v}
	}
	for i, item := range list {
		nv, err := w.one(ctx, item, items, fmt.Sprintf("%s[%d]", at, i), xfile)
		if err != nil {
			return nil, err
		}
		list[i] = nv
	}
	return list, nil
}

// one resolves a single file value: a bare name (sent as {name, content}
// where the schema takes an object, else as the content string) or an
// object {name, content} whose content, or name if content is empty, is the
// registry name. Content that already is a data URI or URL is left alone,
// and so is a file URI without its token (reference).
func (w *rewriter) one(ctx context.Context, v any, n map[string]any, at string, xfile bool) (any, error) {
	f := fileField{decl: declOf(n), object: n != nil && w.s.acceptsObject(n), xfile: xfile}
	switch x := v.(type) {
	case string:
		if reference(x) {
			return x, nil
		}
		if resolved(x) {
			return x, w.literal(at, x)
		}
		content, name, err := w.send(ctx, x, f)
		if err != nil {
			return nil, fieldError(at, err)
		}
		if f.object {
			return map[string]any{"name": name, "content": content}, nil
		}
		return content, nil
	case map[string]any:
		name, _ := x["name"].(string)
		content, _ := x["content"].(string)
		key := cmp.Or(content, name)
		if key == "" || reference(key) {
			return x, nil
		}
		if resolved(key) {
			return x, w.literal(at, key)
		}
		f.object = true
		c, sent, err := w.send(ctx, key, f)
		if err != nil {
			return nil, fieldError(at, err)
		}
		x["content"] = c
		if name == "" {
			x["name"] = sent
		}
		return x, nil
	}
	return v, nil
}

// literal is what becomes of content that already is a file: nil (it is
// sent as it is) or, under refuseLiterals, an error that says what it is.
func (w *rewriter) literal(at, content string) error {
	if !w.refuseLiterals {
		return nil
	}
	what := "a data: URI"
	if !strings.HasPrefix(strings.ToLower(content), "data:") {
		what = "the URL " + transfer.Redact(content)
	}
	return fieldError(at, &literalError{what})
}

// literalError is the error of content written where a file name goes.
type literalError struct{ what string }

func (e *literalError) Error() string {
	return e.what + " is written where a file name goes: name a file instead"
}

func (e *literalError) Unwrap() error { return ErrLiteralFile }

// reference reports whether content is a file URI without its token,
// mcp-file://<host>/<kind>/<id>: a reference, not a capability, which the
// agent that issued it resolves for its caller alone (its upload view names
// staged files so to the model). It is passed on as it is, under
// Config.RefuseLiterals too, and never taken for a name.
func reference(content string) bool {
	_, _, _, token, ok := mcpfile.ParseURI(content)
	return ok && token == ""
}

// resolved reports whether content is already a file rather than a name.
func resolved(content string) bool {
	l := strings.ToLower(content)
	return strings.HasPrefix(l, "data:") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://")
}

func fieldError(at string, err error) error {
	if at == "" {
		return err
	}
	return fmt.Errorf("argument %s: %w", at, err)
}

func joinPath(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

// baseName is the last segment of a registry name: what an agent, which
// keeps no folders in input names, would make of it anyway.
func baseName(name string) string { return path.Base(name) }

// namedItem reports whether object schema n has a "name" property and a
// file field beside it, as an embed item does: a bare string given for such
// an item is its name.
func (w *rewriter) namedItem(n map[string]any) bool {
	props, _ := n["properties"].(map[string]any)
	if _, ok := props["name"]; !ok {
		return false
	}
	for k, p := range props {
		if pm, ok := p.(map[string]any); ok && k != "name" && isFile(w.s.deref(pm)) {
			return true
		}
	}
	return false
}
