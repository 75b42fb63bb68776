package contractcheck

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
)

// The standard check (Options.Standard, `agentura check --standard`)
// judges a server by the draft MCP file contract alone — SEP-2631 "File
// Objects and Transfer" at modelcontextprotocol commit c3cf0eba
// (StandardRevision) — not by agentura's contract: no x-file, no
// download_url, no /uploads, no URL for the server to fetch, nothing of
// agentura's own in the requests (no owner handle). What it does, point by
// point, each naming the section that asks it:
//
//   - it declares the client capability files (§2) at initialize, or in
//     each request's _meta on 2026-07-28;
//   - it reads every x-mcp-file marker: on a URI string property ({"type":
//     "string", "format": "uri"}) or an array's items, its value a
//     FileInputDescriptor (§5);
//   - it sends a file as an RFC 2397 data: URI without parameters to a
//     field whose transferModes allow "inline" (§4, §5), and through
//     files/authorizeUpload and the descriptor it answers to a field that
//     allows "upload", then its file URI in tools/call (§6, §7): never a
//     mode a field does not list;
//   - it sends bytes that miss the digest it declared (§6: the server MUST
//     reject them), and an upload to a descriptor past its expiresAt (the
//     SEP's security section: descriptors are time-limited), when the
//     descriptor expires within Options.ExpiryWait;
//   - it reads the FileValues of the results, in structuredContent and in
//     {"type": "file", "file": FileValue} content blocks (§8; the go-sdk
//     refuses a result with such a block, so the session's transport
//     rewrites it and keeps the block as sent, which is what is read),
//     resolves each with files/authorizeDownload and follows the
//     descriptor, and compares the bytes with every size and sha-256
//     digest stated (§8: clients MUST verify them; §4: base64url without
//     padding);
//   - it asks files/authorizeDownload for a file URI the server never
//     issued, which must be a JSON-RPC error (§8, §10).
//
// Every URL a descriptor names is sent to or fetched only under the guard
// of the default check (the server's origin, Options.AllowHosts), and a
// descriptor over plain http is refused when the server was reached over
// https (the SEP's security section).

// DefaultExpiryWait is how long the standard check waits, unless told
// otherwise, for an upload descriptor to expire: a server whose
// descriptors last longer has the point skipped, saying what to give.
const DefaultExpiryWait = 15 * time.Second

// expiryGrace is how long past a descriptor's expiresAt the check waits
// before sending to it: the server's clock may run a little behind.
const expiryGrace = 2 * time.Second

// maxStandardDownloads caps the produced files the standard check fetches.
const maxStandardDownloads = 5

// stdField is a file input of a tool as the standard check reads it.
type stdField struct {
	tool *mcp.Tool
	root node   // the tool's input schema
	path string // the argument it lies at: "document", "documents[]", "a.b"
	node node   // the schema node that carries x-mcp-file
	decl mcpfile.Input
}

// stdCall is a tool call of the standard check that the tool answered.
type stdCall struct {
	field stdField
	smp   sample
	res   *mcp.CallToolResult
}

// uploadState is what the upload point left for the probes after it.
type uploadState struct {
	offered bool   // a file input allows upload
	ok      bool   // a file went up as the draft says
	smp     sample // the file that went up
	uri     string // its file URI
}

// standard runs the standard check on the open session.
func (c *checker) standard(ctx context.Context) {
	defer c.r.sortStandard()
	tools, ok := c.tools(ctx)
	if !ok {
		return
	}
	fields, bad, good := declare(tools) // the x-mcp-file point (§5): a line of good for each field
	c.r.verdictOr(PointMCPFile, bad, good, NotOffered, "no tool declares a file input with x-mcp-file (§5)")
	if c.o.Tool != "" && !slices.ContainsFunc(fields, func(f stdField) bool { return f.tool.Name == c.o.Tool }) {
		c.noSuchTool(tools, "it has no input marked x-mcp-file")
		c.r.add(PointUpload, Skip, "--tool names no tool with a file input (input-inline)")
		c.r.add(PointInputUpload, Skip, "--tool names no tool with a file input (input-inline)")
		fields = nil
	} else {
		fields = slices.DeleteFunc(fields, func(f stdField) bool { return c.o.Tool != "" && f.tool.Name != c.o.Tool })
	}
	var calls []stdCall
	up := uploadState{}
	if fields != nil || c.o.Tool == "" {
		calls = c.stdInline(ctx, fields)
		var upCalls []stdCall
		upCalls, up = c.stdUpload(ctx, fields)
		calls = append(calls, upCalls...)
	}
	outs := c.stdOutputs(calls)
	c.stdDownloads(ctx, outs)
	known := up.uri
	if len(outs) > 0 {
		known = outs[0].fv.URI
	}
	c.stdUnknownFile(ctx, known)
	c.stdUploadDigest(ctx, up)
	c.stdUploadExpiry(ctx, up) // last: it may wait
}

// FileInputFaults applies SEP-2631 §5 (at StandardRevision) literally to
// the input schemas of tools, as the standard check's x-mcp-file point
// does, and lists what it refuses, one line each naming the tool and the
// argument: an x-mcp-file marker that is not on a URI string property
// ({"type": "string", "format": "uri"}) of the arguments or on an array's
// items (say on an anyOf of object and string), that no argument reaches,
// or whose value is not a well-formed FileInputDescriptor. None for
// schemas §5 accepts, and for tools without file inputs.
func FileInputFaults(tools []*mcp.Tool) []string {
	_, bad, _ := declare(tools)
	return bad
}

// declare reads the x-mcp-file markers of the tools: the file inputs,
// every marker reached from an argument (through properties, items, $ref
// and anyOf/oneOf/allOf), what §5 refuses of them, and a line on each
// input it takes.
func declare(tools []*mcp.Tool) (fields []stdField, bad, good []string) {
	for _, t := range tools {
		root := decodeSchema(t.InputSchema)
		reached := map[uintptr]bool{}
		for _, a := range argFields(root) {
			reached[nodeID(a.node)] = true
			where := t.Name + "." + a.path
			if a.path == "" {
				where = t.Name + " (the schema's root)"
			}
			if why := badPlacement(root, a.node, a.path); why != "" {
				bad = append(bad, where+": "+why)
			}
			bad = append(bad, badFileInput(where, a.node[mcpfile.Keyword])...)
			if a.path == "" {
				continue
			}
			f := stdField{tool: t, root: root, path: a.path, node: a.node, decl: inputOf(a.node[mcpfile.Keyword])}
			fields = append(fields, f)
			good = append(good, fmt.Sprintf("%s: transferModes %s", where, modesOf(f.decl)))
		}
		walkKeyword(root, mcpfile.Keyword, "", func(at string, holder node) {
			if !reached[nodeID(holder)] {
				bad = append(bad, fmt.Sprintf("%s: x-mcp-file at %s, which no argument reaches (§5 puts it on a URI string property of the arguments, or on an array's items)", t.Name, strings.TrimPrefix(at, ".")))
			}
		})
	}
	return fields, bad, good
}

// argField is an x-mcp-file marker reached from the arguments.
type argField struct {
	path string
	node node
}

// argFields lists the markers an argument reaches, with its path:
// "document", "documents[]", "embeds[].content"; "" for a marker on the
// schema's root.
func argFields(root node) []argField {
	var out []argField
	seen := map[string]bool{}
	var walk func(n node, at string, depth int)
	walk = func(n node, at string, depth int) {
		if n == nil || depth > 32 {
			return
		}
		if _, ok := n[mcpfile.Keyword]; ok {
			if !seen[at] {
				seen[at] = true
				out = append(out, argField{at, n})
			}
			return
		}
		if _, ok := n["$ref"]; ok {
			walk(deref(root, n), at, depth+1)
			return
		}
		props, _ := n["properties"].(node)
		for _, k := range slices.Sorted(maps.Keys(props)) {
			next := k
			if at != "" {
				next = at + "." + k
			}
			walk(asNode(props[k]), next, depth+1)
		}
		if items, ok := n["items"].(node); ok {
			walk(items, at+"[]", depth+1)
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			list, _ := n[k].([]any)
			for _, b := range list {
				walk(asNode(b), at, depth+1)
			}
		}
	}
	walk(root, "", 0)
	return out
}

// nodeID is the identity of a decoded schema node.
func nodeID(n node) uintptr { return reflect.ValueOf(n).Pointer() }

// walkKeyword calls fn with each node below n that carries keyword
// (x-mcp-file), and where it is.
func walkKeyword(n node, keyword, at string, fn func(at string, holder node)) {
	if _, ok := n[keyword]; ok {
		fn(at, n)
	}
	for k, v := range n {
		if notSchema[k] {
			continue
		}
		switch x := v.(type) {
		case node:
			walkKeyword(x, keyword, at+"."+k, fn)
		case []any:
			for i, item := range x {
				if m, ok := item.(node); ok {
					walkKeyword(m, keyword, fmt.Sprintf("%s.%s[%d]", at, k, i), fn)
				}
			}
		}
	}
}

// notSchema are the keywords whose values are data, and x-mcp-file itself.
var notSchema = map[string]bool{"default": true, "examples": true, "enum": true, "const": true, mcpfile.Keyword: true}

// badPlacement says why a marker's node is not where §5 puts it, "" if it
// is: a URI string property ({"type": "string", "format": "uri"}; a
// nullable string counts).
func badPlacement(root, n node, at string) string {
	if at == "" {
		return "x-mcp-file on the schema's root, not on a property (§5)"
	}
	t, hasType := n["type"]
	format, _ := n["format"].(string)
	if !hasType {
		if d := deref(root, n); d != nil {
			t, hasType = d["type"]
			if format == "" {
				format, _ = d["format"].(string)
			}
		}
	}
	const want = `§5 puts it on a URI string property, {"type": "string", "format": "uri"}`
	isString := t == "string"
	if list, ok := t.([]any); ok {
		isString = slices.Contains(list, any("string"))
	}
	switch {
	case !hasType:
		of := ""
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			if _, ok := n[k]; ok {
				of = " (its type is left to " + k + ")"
			}
		}
		return fmt.Sprintf(`x-mcp-file on a property without "type": "string"%s; %s`, of, want)
	case !isString:
		return fmt.Sprintf("x-mcp-file on a property of type %s; %s", jsonOf(t), want)
	case format != "uri":
		return fmt.Sprintf(`x-mcp-file on a string without "format": "uri"; %s`, want)
	}
	return ""
}

// badFileInput lists what is wrong with an x-mcp-file value by §5: a
// FileInputDescriptor object (badMCPFile: accept lists MIME types or
// dot-prefixed extensions, maxSize is a size in bytes, transferModes a
// list of names) whose transferModes, when given, name at least one mode,
// each a mode of this revision.
func badFileInput(where string, v any) []string {
	o, ok := v.(node)
	if !ok {
		return []string{fmt.Sprintf("%s: x-mcp-file is %s; §5 wants a FileInputDescriptor object {accept?, maxSize?, transferModes?}", where, jsonOf(v))}
	}
	bad := badMCPFile(where, o)
	if list, ok := o["transferModes"].([]any); ok {
		if len(list) == 0 {
			bad = append(bad, fmt.Sprintf("%s: transferModes is empty, which allows no mode (omit it to allow every mode, §5)", where))
		}
		for _, x := range list {
			if s, isString := x.(string); isString && s != mcpfile.ModeInline && s != mcpfile.ModeUpload {
				bad = append(bad, fmt.Sprintf("%s: transferModes holds %q, not a mode of %s (\"inline\", \"upload\"; §5)", where, s, StandardRevision))
			}
		}
	}
	return bad
}

// inputOf reads an x-mcp-file value as far as it reads: what a malformed
// field says is left out (a listed mode unknown here allows nothing).
func inputOf(v any) mcpfile.Input {
	o, _ := v.(node)
	var in mcpfile.Input
	list, _ := o["accept"].([]any)
	for _, a := range list {
		if s, ok := a.(string); ok {
			in.Accept = append(in.Accept, s)
		}
	}
	if f, ok := o["maxSize"].(float64); ok && f > 0 && f == float64(int64(f)) {
		in.MaxSize = int64(f)
	}
	if modes, ok := o["transferModes"].([]any); ok {
		in.TransferModes = []string{"none"}
		for _, m := range modes {
			if s, _ := m.(string); s == mcpfile.ModeInline || s == mcpfile.ModeUpload {
				in.TransferModes = append(in.TransferModes, s)
			}
		}
	}
	return in
}

// modesOf names the modes a declaration allows.
func modesOf(in mcpfile.Input) string {
	if len(in.TransferModes) == 0 {
		return "omitted (inline and upload)"
	}
	var modes []string
	for _, m := range in.TransferModes {
		if m != "none" {
			modes = append(modes, m)
		}
	}
	if len(modes) == 0 {
		return "[] (no mode)"
	}
	return jsonOf(modes)
}

// candidates are the fields the standard check sends a file to in mode:
// per tool, its first field that allows the mode, up to maxTries tools.
func candidates(fields []stdField, mode string) []stdField {
	var out []stdField
	for _, f := range fields {
		if !f.decl.Allows(mode) || slices.ContainsFunc(out, func(o stdField) bool { return o.tool == f.tool }) {
			continue
		}
		if out = append(out, f); len(out) == maxTries {
			break
		}
	}
	return out
}

// fieldSample is the file to send to f, checked against its maxSize.
func (c *checker) fieldSample(f stdField) (sample, error) {
	smp, err := c.sample(f.node, f.tool)
	if err != nil {
		return smp, err
	}
	if f.decl.MaxSize > 0 && int64(len(smp.data)) > f.decl.MaxSize {
		return smp, fmt.Errorf("the sample %s has %d bytes, over the field's maxSize of %d", smp.name, len(smp.data), f.decl.MaxSize)
	}
	return smp, nil
}

// describeSample is how the report names a sample.
func describeSample(s sample) string {
	return fmt.Sprintf("%s (%s, %d bytes)", s.name, s.mime, len(s.data))
}

// accepted reports point id passed by first, the sample sent as how,
// with the failures before it, and notes the report's tool, parameter and
// sample from the first call that succeeded.
func (c *checker) accepted(id string, first *stdCall, how string, failures []string) []stdCall {
	if c.r.Tool == "" {
		c.r.Tool, c.r.Parameter, c.r.Sample = first.field.tool.Name, first.field.path, describeSample(first.smp)
	}
	detail := fmt.Sprintf("%s accepted %s%s in %s (transferModes %s)", first.field.tool.Name, describeSample(first.smp), how, first.field.path, modesOf(first.field.decl))
	if len(failures) > 0 {
		detail += "\nbefore it: " + strings.Join(failures, "\n")
	}
	c.r.add(id, Pass, "%s", detail)
	return []stdCall{*first}
}

// stdInline sends a sample as a data: URI to the fields that allow
// "inline" (§4, §5) and reports the input-inline point.
func (c *checker) stdInline(ctx context.Context, fields []stdField) []stdCall {
	cands := candidates(fields, mcpfile.ModeInline)
	if len(cands) == 0 {
		c.r.add(PointInline, NotOffered, "no file input allows inline transfer (transferModes, §5)")
		return nil
	}
	first, failures, _ := c.callFields(ctx, cands, func(_ stdField, smp sample) (string, string, error) {
		return "data:" + smp.mime + ";base64," + base64.StdEncoding.EncodeToString(smp.data), "as a data: URI", nil
	})
	if first == nil {
		c.r.add(PointInline, Fail, "%s", strings.Join(failures, "\n"))
		return nil
	}
	return c.accepted(PointInline, first, " as a data: URI without parameters", failures)
}

// callFields calls the tool of each candidate field with a sample, the
// argument value(f, smp) gives (with how it went, for a failure), until one
// produces a file; it returns the first call that succeeded (one that
// produced a file before others) and the failures. An error of value ends
// it.
func (c *checker) callFields(ctx context.Context, cands []stdField, value func(stdField, sample) (v, how string, err error)) (*stdCall, []string, error) {
	var failures []string
	var first *stdCall
	for _, f := range cands {
		smp, err := c.fieldSample(f)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s.%s: %v", f.tool.Name, f.path, err))
			continue
		}
		v, how, err := value(f, smp)
		if err != nil {
			return nil, failures, err
		}
		res, err := c.call(ctx, f.tool.Name, buildArgs(f.root, f.path, v, c.o.Arguments))
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s (%s %s in %s): %v", f.tool.Name, smp.name, how, f.path, err))
			continue
		}
		if first == nil || len(resultFiles(first.res)) == 0 && len(resultFiles(res)) > 0 {
			first = &stdCall{field: f, smp: smp, res: res}
		}
		if len(resultFiles(res)) > 0 {
			break
		}
	}
	return first, failures, nil
}

// stdUpload sends a sample through files/authorizeUpload to the fields
// that allow "upload" (§6, §7) and reports the upload and input-upload
// points.
func (c *checker) stdUpload(ctx context.Context, fields []stdField) ([]stdCall, uploadState) {
	cands := candidates(fields, mcpfile.ModeUpload)
	if len(cands) == 0 {
		why := "no file input allows upload (transferModes, §5), so files/authorizeUpload is not needed"
		c.r.add(PointUpload, NotOffered, "%s", why)
		c.r.add(PointInputUpload, NotOffered, "%s", why)
		return nil, uploadState{}
	}
	st := uploadState{offered: true}
	var uploaded string
	first, failures, err := c.callFields(ctx, cands, func(f stdField, smp sample) (string, string, error) {
		uri, detail, err := c.uploadSample(ctx, smp, smp.name)
		if err != nil {
			var nm noMethod
			if errors.As(err, &nm) {
				err = fmt.Errorf("%w\n%s.%s allows upload (transferModes %s), so a host may send the file that way (the reference host prefers it); a server without files/authorizeUpload declares transferModes [\"inline\"] (§5)",
					err, f.tool.Name, f.path, modesOf(f.decl))
			}
			return "", "", err
		}
		if !st.ok {
			st.ok, st.smp, st.uri, uploaded = true, smp, uri, detail
		}
		return uri, "uploaded, its file URI " + uri, nil
	})
	if err != nil {
		c.r.add(PointUpload, Fail, "%s", err)
		c.r.add(PointInputUpload, Skip, "no file went up (upload)")
		return nil, st
	}
	switch {
	case st.ok:
		c.r.add(PointUpload, Pass, "%s", uploaded)
	default:
		c.r.add(PointUpload, Skip, "%s", strings.Join(failures, "\n"))
	}
	if first == nil {
		status := Fail
		if !st.ok {
			status = Skip
		}
		c.r.add(PointInputUpload, status, "%s", strings.Join(failures, "\n"))
		return nil, st
	}
	return c.accepted(PointInputUpload, first, ", uploaded, as its file URI", failures), st
}

// sampleDigest is the draft's sha-256 digest of b.
func sampleDigest(b []byte) *mcpfile.Digest {
	sum := sha256.Sum256(b)
	return &mcpfile.Digest{Algorithm: mcpfile.DigestSHA256, Value: base64.RawURLEncoding.EncodeToString(sum[:])}
}

// authorizeUpload asks files/authorizeUpload for a file of smp's type, size
// and digest, named name, and checks the answer (§6): a file URI, the size
// and digest declared, an upload descriptor the check may follow.
func (c *checker) authorizeUpload(ctx context.Context, smp sample, name string) (mcpfile.AuthorizeUploadResult, error) {
	var up mcpfile.AuthorizeUploadResult
	size := int64(len(smp.data))
	digest := sampleDigest(smp.data)
	cctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	raw, err := answered(client.AuthorizeUpload(cctx, c.s, mcpfile.AuthorizeUploadParams{Name: name, MIMEType: smp.mime, Size: &size, Digest: digest}))
	if err != nil {
		return up, c.methodError(ctx, mcpfile.MethodAuthorizeUpload, fmt.Sprintf("%s (%s, %d bytes)", name, smp.mime, size), err)
	}
	bad := shapeOf(raw, &up, mcpfile.MethodAuthorizeUpload, "file", "upload")
	if !mcpfile.IsFileURI(up.File.URI) {
		bad = append(bad, fmt.Sprintf("files/authorizeUpload: file.uri %q is not a file URI (§4: an absolute URI to pass where a data: URI would go; hosts tell it from data:, file:, http: and https: values by its scheme)", up.File.URI))
	}
	if up.File.Size != nil && *up.File.Size != size {
		bad = append(bad, fmt.Sprintf("files/authorizeUpload: file.size is %d for a file of %d bytes", *up.File.Size, size))
	}
	if up.File.Digest != nil && *up.File.Digest != *digest {
		bad = append(bad, fmt.Sprintf("files/authorizeUpload: file.digest is %s %s, the declared digest is %s %s (§6: the digest returned is authoritative for the file URI)", up.File.Digest.Algorithm, up.File.Digest.Value, digest.Algorithm, digest.Value))
	}
	if err := c.badDescriptor("files/authorizeUpload: upload", up.Upload, http.MethodPut, http.MethodPost); err != nil {
		bad = append(bad, err.Error())
	}
	if len(bad) > 0 {
		return up, fmt.Errorf("%s\nanswer: %s", strings.Join(bad, "\n"), clip(transfer.Redact(string(raw)), 400))
	}
	return up, nil
}

// methodError words the failure of one of the draft's methods: a JSON-RPC
// refusal as the server gave it, a plain HTTP answer as a broken promise
// of §10 (after which the session is opened again).
func (c *checker) methodError(ctx context.Context, method, what string, err error) error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		err = fmt.Errorf("%s refused %s: %d %s %s", method, what, rpc.Code, rpc.Message, rpc.Data)
		if rpc.Code == jsonrpc.CodeMethodNotFound {
			return noMethod{err}
		}
		return err
	}
	if status, ok := httpRefusal(err); ok {
		c.redial(ctx, err)
		return noMethod{fmt.Errorf("%s (%s) was answered with HTTP %s, not JSON-RPC (§10: -32601 when the method is not offered)", method, what, status)}
	}
	return fmt.Errorf("%s (%s): %w", method, what, err)
}

// noMethod is the error of a method the server does not offer.
type noMethod struct{ error }

func (e noMethod) Unwrap() error { return e.error }

// badDescriptor says what of a descriptor the check will not follow: its
// form (mcpfile.TransferDescriptor.Check: transport https, the method,
// expiresAt, the URL), plain http from a server reached over https (the
// SEP's security section), a URL off the server's origin and the allowed
// hosts (the check's guard).
func (c *checker) badDescriptor(what string, d mcpfile.TransferDescriptor, methods ...string) error {
	if err := d.Check(time.Now(), methods...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	u, _ := url.Parse(d.URL)
	if u.Scheme == "http" && c.endpoint != nil && c.endpoint.Scheme == "https" {
		return fmt.Errorf("%s: the descriptor's URL is plain http though the server is reached over https: descriptors are bearer capabilities the SEP wants transport-protected (Security Implications)", what)
	}
	if err := c.guard.Check(u); err != nil {
		return fmt.Errorf("%s: its URL (%s) is not followed: %w", what, transfer.Redact(d.URL), err)
	}
	return nil
}

// uploadSample sends smp through files/authorizeUpload and its descriptor
// and returns the file URI and what the upload point says of it.
func (c *checker) uploadSample(ctx context.Context, smp sample, name string) (string, string, error) {
	up, err := c.authorizeUpload(ctx, smp, name)
	if err != nil {
		return "", "", err
	}
	status, err := c.send(ctx, up.Upload, smp.data, name, smp.mime)
	if err != nil {
		return "", "", fmt.Errorf("the upload of %s to the descriptor (%s %s): %v", name, up.Upload.Method, transfer.Redact(up.Upload.URL), err)
	}
	return up.File.URI, fmt.Sprintf("files/authorizeUpload for %s: %s, an %s %s descriptor (%s); %d bytes sent, %s",
		describeSample(smp), up.File.URI, up.Upload.Transport, up.Upload.Method, expiresOf(up.Upload), len(smp.data), status), nil
}

// expiresOf says until when a descriptor holds, for the report.
func expiresOf(d mcpfile.TransferDescriptor) string {
	if d.ExpiresAt == "" {
		return "no expiresAt"
	}
	return "expires " + d.ExpiresAt
}

// send sends data to an upload descriptor (client.SendToDescriptor, under
// the guard) and returns the answer's status ("" when none came) and the
// error of a refusal, which names the status.
func (c *checker) send(ctx context.Context, d mcpfile.TransferDescriptor, data []byte, name, mimeType string) (string, error) {
	var status string
	hc := *c.hc
	hc.Transport = statusTransport{next: c.hc.Transport, status: &status}
	cctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	err := client.SendToDescriptor(cctx, &hc, d, bytes.NewReader(data), int64(len(data)), name, mimeType)
	return status, err
}

// statusTransport notes the status of the last answer.
type statusTransport struct {
	next   http.RoundTripper
	status *string
}

func (t statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := cmp.Or(t.next, http.DefaultTransport).RoundTrip(r)
	if err == nil {
		*t.status = resp.Status
	}
	return resp, err
}

// probeUpload authorizes the second upload of a probe (point id), its
// file named after probe and the sample's type; when there is no working
// upload to build on, or the upload is not authorized, it reports the
// point and says so.
func (c *checker) probeUpload(ctx context.Context, id, probe string, up uploadState) (mcpfile.AuthorizeUploadResult, string, bool) {
	switch {
	case !up.offered:
		c.r.add(id, NotOffered, "no file input allows upload (transferModes, §5)")
		return mcpfile.AuthorizeUploadResult{}, "", false
	case !up.ok:
		c.r.add(id, Skip, "no file went up (upload)")
		return mcpfile.AuthorizeUploadResult{}, "", false
	}
	name := "agentura-check-" + probe + path.Ext(up.smp.name)
	ans, err := c.authorizeUpload(ctx, up.smp, name)
	if err != nil {
		c.r.add(id, Skip, "a second upload was not authorized: %v", err)
	}
	return ans, name, err == nil
}

// stdUploadDigest sends bytes that do not match the digest declared at
// files/authorizeUpload: §6 says the server MUST reject them.
func (c *checker) stdUploadDigest(ctx context.Context, up uploadState) {
	ans, name, ok := c.probeUpload(ctx, PointUploadDigest, "digest", up)
	if !ok {
		return
	}
	other := slices.Clone(up.smp.data)
	other[len(other)/2] ^= 0x20
	status, err := c.send(ctx, ans.Upload, other, name, up.smp.mime)
	switch {
	case err == nil:
		c.r.add(PointUploadDigest, Fail, "the descriptor took %d bytes whose sha-256 is not the digest declared at files/authorizeUpload (%s), answering %s: §6 says a server MUST reject a completed upload whose bytes do not match it", len(other), sampleDigest(up.smp.data).Value, status)
	case status != "":
		c.r.add(PointUploadDigest, Pass, "%d bytes that miss the declared digest were refused: %v", len(other), err)
	default:
		c.r.add(PointUploadDigest, Skip, "the upload did not get an answer: %v", err)
	}
}

// stdUploadExpiry sends the sample to a descriptor past its expiresAt, when
// it expires within Options.ExpiryWait: descriptors are time-limited (the
// SEP's security section), until their expiresAt (§6).
func (c *checker) stdUploadExpiry(ctx context.Context, up uploadState) {
	ans, name, ok := c.probeUpload(ctx, PointUploadExpiry, "expiry", up)
	if !ok {
		return
	}
	if ans.Upload.ExpiresAt == "" {
		c.r.add(PointUploadExpiry, Skip, "the descriptor states no expiresAt, so when it ends is not known here (the SEP's security section wants descriptors time-limited)")
		return
	}
	at, _ := time.Parse(time.RFC3339, ans.Upload.ExpiresAt) // Check has read it
	wait := time.Until(at) + expiryGrace
	if c.o.ExpiryWait < 0 || wait > c.o.ExpiryWait {
		c.r.add(PointUploadExpiry, Skip, "the descriptor expires at %s, in %s; the check waits at most %s for one to expire (agentura check: --expiry-wait)",
			ans.Upload.ExpiresAt, time.Until(at).Round(time.Second), max(c.o.ExpiryWait, 0))
		return
	}
	select {
	case <-time.After(wait):
	case <-ctx.Done():
		c.r.add(PointUploadExpiry, Skip, "the check ended before the descriptor expired: %v", ctx.Err())
		return
	}
	late := ans.Upload
	late.ExpiresAt = "" // the check sends to it anyway
	status, err := c.send(ctx, late, up.smp.data, name, up.smp.mime)
	switch {
	case err == nil:
		c.r.add(PointUploadExpiry, Fail, "an upload to a descriptor that expired at %s was taken (%s): descriptors are bearer capabilities the SEP wants time-limited (Security Implications), and expiresAt says until when (§6)", ans.Upload.ExpiresAt, status)
	case status != "":
		c.r.add(PointUploadExpiry, Pass, "an upload to the descriptor after its expiresAt (%s) was refused: %v", ans.Upload.ExpiresAt, err)
	default:
		c.r.add(PointUploadExpiry, Skip, "the upload did not get an answer: %v", err)
	}
}

// stdOutput is a FileValue of a result, as sent.
type stdOutput struct {
	fv    mcpfile.FileValue
	raw   node
	where string // "reverse's structuredContent.result", "reverse's file block content[1]"
}

// resultFiles lists the FileValues of a result: objects of its structured
// content whose uri is a file URI, and the FileValue of each
// {"type": "file"} content block (as sent, kept under
// _meta[transfer.MetaContent] by the session's transport).
func resultFiles(res *mcp.CallToolResult) []stdOutput {
	outs, _ := resultFilesChecked(res)
	return outs
}

// resultFilesChecked is resultFiles, and lists beside them the file blocks
// that are not of §8's shape.
func resultFilesChecked(res *mcp.CallToolResult) (outs []stdOutput, bad []string) {
	if res == nil {
		return nil, nil
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch x := v.(type) {
		case []any:
			for i, item := range x {
				walk(item, fmt.Sprintf("%s[%d]", at, i))
			}
		case node:
			if u, _ := x["uri"].(string); mcpfile.IsFileURI(u) && x["type"] != "resource_link" {
				outs = append(outs, stdOutput{fv: fileValueOf(x), raw: x, where: at})
				return
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k], at+"."+k)
			}
		}
	}
	var sc any
	if b, err := json.Marshal(res.StructuredContent); err == nil {
		json.Unmarshal(b, &sc)
	}
	walk(sc, "structuredContent")
	for i, ct := range res.Content {
		b, _ := json.Marshal(ct)
		var block struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		json.Unmarshal(b, &block)
		raw := block.Meta[transfer.MetaContent]
		if raw == nil {
			continue
		}
		var sent node
		if json.Unmarshal(raw, &sent) != nil || sent["type"] != mcpfile.ContentTypeFile {
			continue
		}
		where := fmt.Sprintf("file block content[%d]", i)
		file, ok := sent["file"].(node)
		u, _ := file["uri"].(string)
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: %s has no \"file\" object; §8's block is {\"type\": \"file\", \"file\": FileValue}", where, clip(string(raw), 200)))
		case !mcpfile.IsFileURI(u):
			bad = append(bad, fmt.Sprintf("%s: file.uri %q is not a file URI (§4)", where, u))
		default:
			outs = append(outs, stdOutput{fv: fileValueOf(file), raw: file, where: where})
		}
	}
	return outs, bad
}

// fileValueOf reads a FileValue as far as it reads.
func fileValueOf(n node) mcpfile.FileValue {
	var fv mcpfile.FileValue
	fv.URI, _ = n["uri"].(string)
	fv.Name, _ = n["name"].(string)
	fv.MIMEType, _ = n["mimeType"].(string)
	return fv
}

// stdOutputs reports the outputs point (§4, §8) and returns the FileValues
// of the calls' results.
func (c *checker) stdOutputs(calls []stdCall) []stdOutput {
	if len(calls) == 0 {
		c.r.add(PointOutputs, Skip, "no tool call succeeded (input-inline, input-upload)")
		return nil
	}
	var outs []stdOutput
	var bad, good []string
	for _, cl := range calls {
		o, b := resultFilesChecked(cl.res)
		for _, x := range b {
			bad = append(bad, cl.field.tool.Name+": "+x)
		}
		for _, out := range o {
			out.where = cl.field.tool.Name + "'s " + out.where
			what := fmt.Sprintf("%s (%s)", out.where, out.fv.URI)
			var wrong []string
			if v, ok := out.raw["name"]; ok {
				if _, isString := v.(string); !isString {
					wrong = append(wrong, "name is "+jsonOf(v)+", not a string")
				}
			}
			if v, ok := out.raw["mimeType"]; ok {
				if s, isString := v.(string); !isString || !mimePattern.MatchString(strings.ToLower(strings.Split(s, ";")[0])) || strings.HasPrefix(s, ".") {
					wrong = append(wrong, "mimeType is "+jsonOf(v)+", not a MIME type")
				}
			}
			if len(wrong) > 0 {
				bad = append(bad, what+": "+strings.Join(wrong, "; "))
			}
			name := cmp.Or(out.fv.Name, "(no name)")
			good = append(good, fmt.Sprintf("%s %s, in %s", name, out.fv.URI, out.where))
			outs = append(outs, out)
		}
	}
	c.r.verdictOr(PointOutputs, bad, good, Skip, "the tools called produced no FileValue (§8: in structuredContent or a {\"type\": \"file\"} content block): name one that does with --tool, and its arguments with --args")
	return outs
}

// fetched is a produced file downloaded through files/authorizeDownload.
type fetched struct {
	uri  string
	name string
	// stated are the FileValues that describe it: the results' and the
	// one files/authorizeDownload answered, with where each was.
	stated []stdOutput
	body   []byte
}

// stdDownloads resolves each produced file with files/authorizeDownload,
// follows the descriptor (§8), and reports the download, size and digest
// points.
func (c *checker) stdDownloads(ctx context.Context, outs []stdOutput) {
	if len(outs) == 0 {
		for _, id := range []string{PointDownload, PointSize, PointDigest} {
			c.r.add(id, Skip, "no FileValue to download (outputs)")
		}
		return
	}
	var files []*fetched
	byURI := map[string]*fetched{}
	for _, o := range outs {
		f := byURI[o.fv.URI]
		if f == nil {
			f = &fetched{uri: o.fv.URI, name: cmp.Or(o.fv.Name, o.fv.URI)}
			byURI[o.fv.URI] = f
			files = append(files, f)
		}
		f.stated = append(f.stated, o)
	}
	if len(files) > maxStandardDownloads {
		files = files[:maxStandardDownloads]
	}
	var bad, good []string
	for _, f := range files {
		line, err := c.downloadFile(ctx, f)
		if err != nil {
			bad = append(bad, f.name+": "+err.Error())
			continue
		}
		good = append(good, f.name+": "+line)
	}
	c.r.verdict(PointDownload, bad, good)
	c.sizes(files)
	c.digests(files)
}

// downloadFile asks files/authorizeDownload for f, checks the answer and
// fetches the bytes under the guard.
func (c *checker) downloadFile(ctx context.Context, f *fetched) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	raw, err := c.authorizeDownloadRaw(cctx, f.uri)
	if err != nil {
		return "", c.methodError(ctx, mcpfile.MethodAuthorizeDownload, f.uri, err)
	}
	var dl mcpfile.AuthorizedFile
	bad := shapeOf(raw, &dl, mcpfile.MethodAuthorizeDownload, "file", "download")
	if dl.File.URI != f.uri {
		bad = append(bad, fmt.Sprintf("files/authorizeDownload answered the file %q for %q (§8: the same file reference)", dl.File.URI, f.uri))
	}
	if dl.Download == nil {
		bad = append(bad, "files/authorizeDownload answered no download descriptor")
	} else if err := c.badDescriptor("files/authorizeDownload: download", *dl.Download, http.MethodGet); err != nil {
		bad = append(bad, err.Error())
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("%s\nanswer: %s", strings.Join(bad, "\n"), clip(transfer.Redact(string(raw)), 400))
	}
	var sent struct {
		File node `json:"file"`
	}
	json.Unmarshal(raw, &sent)
	f.stated = append(f.stated, stdOutput{fv: dl.File, raw: sent.File, where: "files/authorizeDownload"})
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, dl.Download.URL, nil)
	if err != nil {
		return "", err
	}
	for k, v := range dl.Download.Headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req) // under the guard, redirects too
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = transfer.Redact(ue.URL)
		}
		return "", fmt.Errorf("GET of the download descriptor: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET of the download descriptor answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return "", fmt.Errorf("GET of the download descriptor: %w", err)
	}
	if len(body) > maxDownload {
		return "", fmt.Errorf("the download passed %d bytes, the most the check reads", maxDownload)
	}
	f.body = body
	return fmt.Sprintf("files/authorizeDownload answered an %s GET descriptor (%s); %d bytes received", dl.Download.Transport, expiresOf(*dl.Download), len(body)), nil
}

// sizes reports the size point: every size stated is a whole number of
// bytes, and that of a downloaded file its byte count (§8).
func (c *checker) sizes(files []*fetched) {
	var bad, good []string
	downloaded, stated := 0, 0
	for _, f := range files {
		var wrong []string
		for _, s := range f.stated {
			v, ok := s.raw["size"]
			if !ok {
				continue
			}
			stated++
			n, isNum := v.(float64)
			switch {
			case !isNum || n < 0 || n != float64(int64(n)):
				wrong = append(wrong, fmt.Sprintf("%s states size %s, not a number of bytes", s.where, jsonOf(v)))
			case f.body != nil && int64(n) != int64(len(f.body)):
				wrong = append(wrong, fmt.Sprintf("%s states size %d", s.where, int64(n)))
			}
		}
		if f.body != nil {
			downloaded++
		}
		switch {
		case len(wrong) > 0 && f.body != nil:
			bad = append(bad, fmt.Sprintf("%s: %d bytes received; %s (§8: a client MUST verify the byte count)", f.name, len(f.body), strings.Join(wrong, ", ")))
		case len(wrong) > 0:
			bad = append(bad, f.name+": "+strings.Join(wrong, ", "))
		case f.body != nil:
			good = append(good, fmt.Sprintf("%s: %d bytes, as stated", f.name, len(f.body)))
		}
	}
	switch {
	case len(bad) > 0:
		c.r.add(PointSize, Fail, "%s", strings.Join(bad, "\n"))
	case downloaded == 0:
		c.r.add(PointSize, Skip, "nothing was downloaded (download)")
	case stated == 0:
		c.r.add(PointSize, Skip, "no FileValue states a size (it is optional)")
	default:
		c.r.add(PointSize, Pass, "%s", strings.Join(good, "\n"))
	}
}

// base64urlSHA256 is a sha-256 digest in base64url without padding.
var base64urlSHA256 = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// digests reports the digest point: every digest stated is of §4's form
// ({algorithm, value}, a sha-256 value in base64url without padding), and
// that of a downloaded file its bytes' (§8).
func (c *checker) digests(files []*fetched) {
	var bad, good, notes []string
	downloaded, checked := 0, 0
	for _, f := range files {
		var got string
		if f.body != nil {
			downloaded++
			sum := sha256.Sum256(f.body)
			got = base64.RawURLEncoding.EncodeToString(sum[:])
		}
		var wrong []string
		verified := false
		for _, s := range f.stated {
			v, ok := s.raw["digest"]
			if !ok {
				continue
			}
			d, isObject := v.(node)
			algorithm, _ := d["algorithm"].(string)
			value, isString := d["value"].(string)
			switch {
			case !isObject || algorithm == "" || !isString:
				wrong = append(wrong, fmt.Sprintf("%s states digest %s, not {\"algorithm\", \"value\"} (§4)", s.where, clip(jsonOf(v), 120)))
			case !strings.EqualFold(algorithm, mcpfile.DigestSHA256):
				notes = append(notes, fmt.Sprintf("%s: %s states a %q digest, which the check does not compute (sha-256 is the one every implementation supports, §4)", f.name, s.where, algorithm))
			case !base64urlSHA256.MatchString(value):
				wrong = append(wrong, fmt.Sprintf("%s states the sha-256 digest %q, not 43 characters of base64url without padding (§4)", s.where, value))
			case f.body != nil && value != got:
				wrong = append(wrong, fmt.Sprintf("%s states the digest %s", s.where, value))
			case f.body != nil:
				verified = true
			}
		}
		switch {
		case len(wrong) > 0 && f.body != nil:
			bad = append(bad, fmt.Sprintf("%s: the bytes received have the sha-256 digest %s; %s (§8: a client MUST verify the digest)", f.name, got, strings.Join(wrong, ", ")))
		case len(wrong) > 0:
			bad = append(bad, f.name+": "+strings.Join(wrong, ", "))
		case verified:
			checked++
			good = append(good, fmt.Sprintf("%s: sha-256 %s, as stated", f.name, got))
		}
	}
	switch {
	case len(bad) > 0:
		c.r.add(PointDigest, Fail, "%s", strings.Join(append(bad, notes...), "\n"))
	case downloaded == 0:
		c.r.add(PointDigest, Skip, "nothing was downloaded (download)")
	case checked == 0:
		c.r.add(PointDigest, Skip, "%s", strings.Join(append([]string{"no FileValue states a sha-256 digest (it is optional)"}, notes...), "\n"))
	default:
		c.r.add(PointDigest, Pass, "%s", strings.Join(append(good, notes...), "\n"))
	}
}

// stdUnknownFile asks files/authorizeDownload for a file URI like known
// that the server never issued: §8 says to reject it with a JSON-RPC error
// (§10: -32602).
func (c *checker) stdUnknownFile(ctx context.Context, known string) {
	if known == "" {
		c.r.add(PointUnknownFile, NotOffered, "the server handed out no file URI (no FileValue, no upload), so files/authorizeDownload is not needed")
		return
	}
	uri := unknownLike(known)
	cctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	raw, err := c.authorizeDownloadRaw(cctx, uri)
	var rpc *jsonrpc.Error
	switch {
	case err == nil:
		c.r.add(PointUnknownFile, Fail, "files/authorizeDownload of %s, a file URI the server never issued, answered %s (§8: a server MUST reject unknown file URIs with a JSON-RPC error)", uri, clip(transfer.Redact(string(raw)), 300))
	case errors.As(err, &rpc):
		c.r.add(PointUnknownFile, Pass, "files/authorizeDownload of %s: %d %s %s", uri, rpc.Code, rpc.Message, rpc.Data)
	default:
		c.r.add(PointUnknownFile, Fail, "%v", c.methodError(ctx, mcpfile.MethodAuthorizeDownload, uri, err))
	}
}

// unknownLike is a file URI of known's scheme and authority that the
// server never issued.
func unknownLike(known string) string {
	var b [6]byte
	rand.Read(b[:])
	id := "agentura-check-unknown-" + hex.EncodeToString(b[:])
	u, err := url.Parse(known)
	if err != nil {
		return mcpfile.Scheme + "://agentura-check.invalid/" + id
	}
	u.RawQuery, u.Fragment, u.RawPath = "", "", ""
	if u.Opaque != "" {
		u.Opaque += "-" + id
		return u.String()
	}
	u.Path = path.Join(path.Dir("/"+strings.TrimPrefix(u.Path, "/")), id)
	return u.String()
}
