package contractcheck

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"regexp"
	"slices"
	"strings"

	"github.com/agentura/agentura/internal/lib/minipdf"
)

// sample is a small file of one type, made to be sent to a tool.
type sample struct {
	name string
	mime string
	data []byte
}

// kind is a type the checker can make a file of, and the words that say a
// parameter takes it.
type kind struct {
	ext, mime string
	words     []string // whole words of a description, lower case
	make      func() []byte
}

// kinds in the order tried when a parameter's words name several.
var kinds = []kind{
	{"png", "image/png", []string{"png", "image", "images", "picture", "pictures", "photo", "scan", "screenshot"}, makePNG},
	{"jpg", "image/jpeg", []string{"jpeg", "jpg"}, makeJPEG},
	{"pdf", "application/pdf", []string{"pdf", "pdfs", "document"}, makePDF},
	{"csv", "text/csv", []string{"csv", "spreadsheet"}, func() []byte { return []byte("city,country\nParis,France\nLima,Peru\n") }},
	{"json", "application/json", []string{"json"}, func() []byte { return []byte(`{"checked_by": "agentura check", "items": [1, 2, 3]}` + "\n") }},
	{"md", "text/markdown", []string{"markdown", "md"}, func() []byte { return []byte("# Sample\n\nWritten by *agentura check*.\n") }},
	{"html", "text/html", []string{"html", "web page"}, func() []byte {
		return []byte("<!doctype html>\n<title>Sample</title>\n<p>Written by agentura check.</p>\n")
	}},
	{"txt", "text/plain", []string{"text", "txt", "plain"}, func() []byte { return []byte("A sample text file,\nwritten by agentura check.\n") }},
}

var word = regexp.MustCompile(`[a-z0-9]+`)

// guessKind picks the kind of file to send to a parameter: the first type
// of its x-mcp-file accept list the checker can make, else the kind whose
// word comes first in the parameter's description (and then the tool's),
// else text.
func guessKind(accept []string, texts ...string) kind {
	for _, a := range accept {
		a = strings.ToLower(strings.TrimSpace(a))
		for _, k := range kinds {
			if a == k.mime || a == "."+k.ext || (strings.HasSuffix(a, "/*") && strings.HasPrefix(k.mime, strings.TrimSuffix(a, "*"))) {
				return k
			}
		}
	}
	for _, t := range texts {
		best, at := -1, len(t)+1
		lower := strings.ToLower(t)
		for _, loc := range word.FindAllStringIndex(lower, -1) {
			w := lower[loc[0]:loc[1]]
			for i, k := range kinds {
				if slices.Contains(k.words, w) && loc[0] < at {
					best, at = i, loc[0]
				}
			}
		}
		if best >= 0 {
			return kinds[best]
		}
	}
	return kinds[len(kinds)-1]
}

// makeSample makes a file of kind k.
func makeSample(k kind) sample {
	return sample{name: "agentura-check-sample." + k.ext, mime: k.mime, data: k.make()}
}

// picture is a small picture with dark bars on white: a real image, some
// text-like contrast for tools that look for it.
func picture() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 120, 48))
	for y := range 48 {
		for x := range 120 {
			c := color.RGBA{255, 255, 255, 255}
			if y > 12 && y < 36 && x%16 < 9 && x > 8 && x < 112 {
				c = color.RGBA{20, 20, 20, 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}

func makePNG() []byte {
	var b bytes.Buffer
	png.Encode(&b, picture())
	return b.Bytes()
}

func makeJPEG() []byte {
	var b bytes.Buffer
	jpeg.Encode(&b, picture(), &jpeg.Options{Quality: 90})
	return b.Bytes()
}

// makePDF writes a one-page PDF 1.4 with a line of text.
func makePDF() []byte {
	return minipdf.Write(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		minipdf.Stream("BT /F1 18 Tf 72 720 Td (Sample written by agentura check) Tj ET"),
	)
}

// node is a decoded JSON schema node.
type node = map[string]any

// decodeSchema turns a tool's input schema into generic maps.
func decodeSchema(s any) node {
	b, _ := json.Marshal(s)
	var n node
	json.Unmarshal(b, &n)
	if n == nil {
		n = node{}
	}
	return n
}

// deref follows a local "$ref" of root ("#/$defs/X").
func deref(root, n node) node {
	for i := 0; n != nil && i < 32; i++ {
		ref, ok := n["$ref"].(string)
		if !ok {
			return n
		}
		var cur any = root
		for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, _ := cur.(node)
			cur = m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
		}
		n, _ = cur.(node)
	}
	return n
}

// fieldNode returns the schema node of the file field at path ("source",
// "sources", "embeds[].content") and the object node that holds it.
func fieldNode(root node, path string) (field, parent node) {
	cur := root
	parent = root
	for _, seg := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(seg, "[]")
		parent = deref(root, cur)
		props, _ := parent["properties"].(node)
		next, _ := props[name].(node)
		cur = deref(root, next)
		if list && cur != nil {
			items, _ := cur["items"].(node)
			if items == nil {
				items = firstBranch(root, cur, "items")
			}
			cur = deref(root, items)
		}
		if cur == nil {
			return nil, parent
		}
	}
	return cur, parent
}

// firstBranch returns key of the first anyOf/oneOf branch that has it.
func firstBranch(root, n node, key string) node {
	for _, k := range []string{"anyOf", "oneOf"} {
		list, _ := n[k].([]any)
		for _, b := range list {
			if m := deref(root, asNode(b)); m != nil {
				if v, ok := m[key].(node); ok {
					return v
				}
			}
		}
	}
	return nil
}

func asNode(v any) node {
	m, _ := v.(node)
	return m
}

// describe is the text a node says of itself.
func describe(n node) string {
	d, _ := n["description"].(string)
	t, _ := n["title"].(string)
	return strings.TrimSpace(t + " " + d)
}

// buildArgs makes the arguments of a call that gives the sample, by its
// name, to the file field at path, and made-up values to the other required
// parameters; extra (the user's) wins over both. The names are resolved to
// the file afterwards (the client package's rewrite).
func buildArgs(root node, path, name string, extra map[string]any) map[string]any {
	args := map[string]any{}
	cur := args
	segs := strings.Split(path, ".")
	schema := root
	for i, seg := range segs {
		key, list := strings.CutSuffix(seg, "[]")
		obj := deref(root, schema)
		props, _ := obj["properties"].(node)
		sub := deref(root, asNode(props[key]))
		last := i == len(segs)-1
		switch {
		case last && list:
			cur[key] = []any{name}
		case last:
			cur[key] = name
		default:
			next := map[string]any{}
			holder := sub
			if list {
				items := asNode(sub["items"])
				if items == nil {
					items = firstBranch(root, sub, "items")
				}
				holder = deref(root, items)
				cur[key] = []any{next}
			} else {
				cur[key] = next
			}
			// An item with a name beside its file (an embed) is named after the file.
			if hp, _ := holder["properties"].(node); hp["name"] != nil {
				next["name"] = name
			}
			fillRequired(root, holder, next)
			cur, schema = next, holder
		}
	}
	fillRequired(root, root, args)
	for k, v := range extra {
		args[k] = v
	}
	return args
}

// fillRequired gives each required property of obj's schema that args lacks
// a made-up value.
func fillRequired(root, schema node, args map[string]any) {
	schema = deref(root, schema)
	req, _ := schema["required"].([]any)
	props, _ := schema["properties"].(node)
	for _, r := range req {
		k, _ := r.(string)
		if _, ok := args[k]; ok || k == "" {
			continue
		}
		args[k] = madeUp(root, asNode(props[k]), 0)
	}
}

// madeUp is a value that fits schema n as far as its keywords say.
func madeUp(root, n node, depth int) any {
	n = deref(root, n)
	if n == nil || depth > 8 {
		return "sample"
	}
	if v, ok := n["const"]; ok {
		return v
	}
	if v, ok := n["default"]; ok {
		return v
	}
	if list, ok := n["examples"].([]any); ok && len(list) > 0 {
		return list[0]
	}
	if list, ok := n["enum"].([]any); ok && len(list) > 0 {
		return list[0]
	}
	if b := firstBranch(root, n, "type"); b != nil && n["type"] == nil {
		return madeUp(root, b, depth+1)
	}
	t := n["type"]
	if list, ok := t.([]any); ok {
		for _, x := range list {
			if x != "null" {
				t = x
				break
			}
		}
	}
	switch t {
	case "integer", "number":
		if m, ok := n["minimum"].(float64); ok {
			return m
		}
		return 1
	case "boolean":
		return false
	case "array":
		var items []any
		if m, _ := n["minItems"].(float64); m > 0 {
			for range int(m) {
				items = append(items, madeUp(root, asNode(n["items"]), depth+1))
			}
		}
		return append([]any{}, items...)
	case "object":
		obj := map[string]any{}
		fillRequired(root, n, obj)
		return obj
	}
	s := "sample"
	if m, ok := n["minLength"].(float64); ok && int(m) > len(s) {
		s = strings.Repeat("s", int(m))
	}
	return s
}
