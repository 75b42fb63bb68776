package client

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/agentura/agentura/filename"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
	"github.com/agentura/agentura/transferclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// produced is one file a result names, gathered from its structured
// content, resource links and embedded resources, keyed by URL.
type produced struct {
	url      string
	fileURI  string // a draft server's FileValue: url comes from files/authorizeDownload
	name     string
	size     int64  // -1: unknown
	sha256   string // "": not announced
	embedded []byte
	hasBytes bool
}

// Collect registers the files a tool result names and rewrites the result
// for the model: URLs, resource links and embedded bytes go; a line
// "Tool produced: report.pptx (PowerPoint, 1.0 MB)" per file comes; the
// structured content keeps each file's name (its registry name), type and
// size but no URL. The registry names are listed under _meta[transfer.MetaProduced],
// files that could not be fetched under _meta[transfer.MetaFailed] (and in the text).
// A produced file a draft MCP file contract server gives only as a
// FileValue is resolved with files/authorizeDownload on the session of
// UseSession. It is what the middleware does after a call, exported for
// hosts that call tools another way.
func (m *Middleware) Collect(ctx context.Context, tool string, res *mcp.CallToolResult) {
	m.collect(ctx, m.currentSession(), tool, res)
}

func (m *Middleware) collect(ctx context.Context, session *mcp.ClientSession, tool string, res *mcp.CallToolResult) {
	files := gather(res)
	if len(files) == 0 {
		return
	}
	var lines, names, failed []string
	renamed := map[string]string{} // url (or file URI) → registry name
	for _, f := range files {
		if f.fileURI != "" {
			u, size, sum, err := m.downloadURL(ctx, session, f.fileURI, ownerHandle(res))
			if err != nil {
				err = fmt.Errorf("%s: %w", f.name, err)
				m.cfg.Logger.Warn("produced file not fetched", "tool", tool, "name", f.name, "err", err)
				lines = append(lines, fmt.Sprintf("%s%s, but the client could not fetch it (%s)", transfer.ProducedPrefix, f.name, shortReason(err)))
				failed = append(failed, err.Error())
				renamed[f.fileURI] = f.name
				continue
			}
			f.url = u
			if f.size < 0 {
				f.size = size
			}
			f.sha256 = cmp.Or(f.sha256, sum)
		}
		e, err := m.fetch(ctx, f, ToolSource(tool))
		if err != nil {
			m.cfg.Logger.Warn("produced file not fetched", "tool", tool, "name", f.name, "err", err)
			lines = append(lines, fmt.Sprintf("%s%s, but the client could not fetch it (%s)", transfer.ProducedPrefix, f.name, shortReason(err)))
			failed = append(failed, f.name+": "+err.Error())
			renamed[f.key()] = f.name
			continue
		}
		lines = append(lines, transfer.ProducedPrefix+e.Describe())
		names = append(names, e.Name)
		renamed[f.key()] = e.Name
	}
	var content []mcp.Content
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.ResourceLink, *mcp.EmbeddedResource:
			continue // the files are in the registry now
		case *mcp.TextContent:
			scrubFileValues(map[string]any(x.Meta), renamed)
			if t := scrubText(x.Text, renamed); t != "" {
				content = append(content, &mcp.TextContent{Text: t, Meta: x.Meta, Annotations: x.Annotations})
			}
		default:
			content = append(content, c)
		}
	}
	res.Content = append(content, &mcp.TextContent{Text: strings.Join(lines, "\n")})
	res.StructuredContent = scrubStructured(res.StructuredContent, renamed)
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta[transfer.MetaProduced] = names
	if len(failed) > 0 {
		res.Meta[transfer.MetaFailed] = failed
	}
}

// ProducedNames returns the registry names Collect listed in a result.
func ProducedNames(res *mcp.CallToolResult) []string {
	if res == nil {
		return nil
	}
	names, _ := res.Meta[transfer.MetaProduced].([]string)
	return names
}

// FailedFiles returns the "name: reason" lines of produced files Collect
// could not fetch.
func FailedFiles(res *mcp.CallToolResult) []string {
	if res == nil {
		return nil
	}
	failed, _ := res.Meta[transfer.MetaFailed].([]string)
	return failed
}

// key is what names f in the result: its file URI, else its URL.
func (f *produced) key() string {
	return cmp.Or(f.fileURI, f.url)
}

// fetch registers f: from its embedded bytes when the result carried them
// (no download), else by downloading its URL.
func (m *Middleware) fetch(ctx context.Context, f *produced, source string) (Entry, error) {
	if f.hasBytes {
		if max := m.cfg.MaxDownloadBytes; int64(len(f.embedded)) > max {
			return Entry{}, fmt.Errorf("%s: %w: the embedded copy has %d bytes, over the cap of %d (Config.MaxDownloadBytes; agentura: --max-download)",
				f.name, transferclient.ErrTooLarge, len(f.embedded), max)
		}
		if f.size >= 0 && int64(len(f.embedded)) != f.size {
			return Entry{}, fmt.Errorf("the embedded copy has %d bytes, the result says %d", len(f.embedded), f.size)
		}
		return m.cfg.Registry.Add(ctx, f.name, transfer.VerifySHA256(bytes.NewReader(f.embedded), f.sha256, f.name), source)
	}
	e, err := m.download(ctx, f.url, f.name, f.sha256, source)
	if err != nil {
		return Entry{}, err
	}
	if f.size >= 0 && e.Size != f.size {
		m.cfg.Registry.Remove(e.Name)
		return Entry{}, fmt.Errorf("download %s: got %d bytes, the result says %d", f.name, e.Size, f.size)
	}
	return e, nil
}

// gather lists the produced files of res in order: structured content
// first (it has the display names), then the content blocks, one entry
// per URL or file URI. A draft server's FileValue counts wherever the
// reference host looks for one: anywhere in the structured content, a
// resource link to a file URI (what a {"type": "file"} block becomes,
// content.go), and in the _meta of the other blocks.
func gather(res *mcp.CallToolResult) []*produced {
	var out []*produced
	byURL := map[string]*produced{}
	add := func(u, name string, size int64, sum string) *produced {
		if u == "" {
			return nil
		}
		if p := byURL[u]; p != nil {
			p.name = cmp.Or(p.name, name)
			if p.size < 0 {
				p.size = size
			}
			p.sha256 = cmp.Or(p.sha256, sum)
			return p
		}
		p := &produced{url: u, name: name, size: size, sha256: sum}
		byURL[u] = p
		out = append(out, p)
		return p
	}
	addFile := func(fv mcpfile.FileValue) {
		if byURL[fv.URI] != nil {
			return
		}
		p := &produced{fileURI: fv.URI, name: filename.Base(fv.Name), size: num(fv.Size)}
		if fv.Digest != nil {
			p.sha256, _ = fv.Digest.Hex()
		}
		p.name = cmp.Or(p.name, "file")
		byURL[fv.URI] = p
		out = append(out, p)
	}
	if sc, ok := res.StructuredContent.(map[string]any); ok {
		for _, f := range structuredFiles(sc) {
			p := add(str(f["download_url"]), str(f["filename"]), num(f["size_bytes"]), str(f[transfer.MetaSHA256]))
			// The same file's FileValue (beside it, or again as a file
			// content block) names the file already fetched by its URL.
			if fv, _ := f["file"].(map[string]any); p != nil && str(fv["uri"]) != "" {
				byURL[str(fv["uri"])] = p
			}
		}
		fileValues(sc, addFile)
	}
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.ResourceLink:
			if isFileLink(x) {
				addFile(mcpfile.FileValue{URI: x.URI, Name: x.Name, MIMEType: x.MIMEType, Size: x.Size,
					Digest: mcpfile.SHA256(str(x.Meta[transfer.MetaSHA256]))})
				continue
			}
			add(x.URI, x.Name, num(x.Size), str(x.Meta[transfer.MetaSHA256]))
		case *mcp.EmbeddedResource:
			if x.Resource == nil {
				continue
			}
			p := add(x.Resource.URI, "", -1, "")
			if p == nil {
				continue
			}
			p.hasBytes = true
			if x.Resource.Blob != nil {
				p.embedded = x.Resource.Blob
			} else {
				p.embedded = []byte(x.Resource.Text)
			}
		default:
			fileValues(blockMeta(c), addFile)
		}
	}
	for _, p := range out {
		p.name = cmp.Or(p.name, nameFromURL(p.url))
	}
	return out
}

// isFileLink reports whether a resource link names a draft server's file
// rather than a resource or a URL: a file block the client rewrote
// (content.go), or a link to an mcp-file: URI.
func isFileLink(l *mcp.ResourceLink) bool {
	if _, rewritten := l.Meta[transfer.MetaContent]; rewritten {
		return mcpfile.IsFileURI(l.URI)
	}
	u, err := url.Parse(l.URI)
	return err == nil && strings.EqualFold(u.Scheme, mcpfile.Scheme)
}

// blockMeta is the _meta of a text, image or audio block, as generic JSON
// values; nil for none.
func blockMeta(c mcp.Content) map[string]any {
	switch x := c.(type) {
	case *mcp.TextContent:
		return x.Meta
	case *mcp.ImageContent:
		return x.Meta
	case *mcp.AudioContent:
		return x.Meta
	}
	return nil
}

// ScrubProduced takes out of res, a result whose produced files reached
// the caller another way (the files of an A2A task), what an agentura
// agent says of its own copies, as Collect does once it has fetched them:
// its "Tool produced" lines with their URLs, and each file's download URL
// and FileValue in the structured content, where names (the agent's name
// of a file → the name it has now) renames its "filename". A text block
// left empty goes.
func ScrubProduced(res *mcp.CallToolResult, names map[string]string) {
	renamed := map[string]string{} // its download URL → its name now
	if sc, ok := res.StructuredContent.(map[string]any); ok {
		for _, f := range structuredFiles(sc) {
			if n, ok := names[str(f["filename"])]; ok {
				renamed[str(f["download_url"])] = n
			}
		}
	}
	var content []mcp.Content
	for _, c := range res.Content {
		if x, ok := c.(*mcp.TextContent); ok {
			if x.Text = scrubText(x.Text, renamed); x.Text == "" {
				continue
			}
		}
		content = append(content, c)
	}
	res.Content = content
	res.StructuredContent = scrubStructured(res.StructuredContent, renamed)
}

// structuredFiles returns the file objects of structured content: the
// object itself when it has download_url, and each item of "files".
func structuredFiles(sc map[string]any) []map[string]any {
	var out []map[string]any
	if _, ok := sc["download_url"].(string); ok {
		out = append(out, sc)
	}
	list, _ := sc["files"].([]any)
	for _, f := range list {
		if m, ok := f.(map[string]any); ok {
			if _, ok := m["download_url"].(string); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// scrubStructured removes download URLs from structured content and names
// each file by its registry name.
func scrubStructured(sc any, renamed map[string]string) any {
	m, ok := sc.(map[string]any)
	if !ok {
		return sc
	}
	for _, f := range structuredFiles(m) {
		u := str(f["download_url"])
		delete(f, "download_url")
		delete(f, "file") // the same file as a FileValue: the registry name is the handle
		if n, ok := renamed[u]; ok {
			f["filename"] = n
		}
	}
	scrubFileValues(m, renamed)
	return m
}

// scrubFileValues names each FileValue by its registry name in place of
// its file URI.
func scrubFileValues(v any, renamed map[string]string) {
	switch x := v.(type) {
	case []any:
		for _, i := range x {
			scrubFileValues(i, renamed)
		}
	case map[string]any:
		if n, ok := renamed[str(x["uri"])]; ok && mcpfile.IsFileURI(str(x["uri"])) {
			delete(x, "uri")
			x["name"] = n
			return
		}
		for _, i := range x {
			scrubFileValues(i, renamed)
		}
	}
}

// scrubText drops the agent's own "Tool produced: ... <url>" lines and puts
// registry names where a produced file's URL stood.
func scrubText(text string, renamed map[string]string) string {
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, transfer.ProducedPrefix) {
			continue
		}
		for u, n := range renamed {
			line = strings.ReplaceAll(line, u, n)
		}
		keep = append(keep, line)
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// nameFromURL derives a name from a URL without one: the path after
// /files/<id>/ on an agentura agent, else the last segment.
func nameFromURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "file"
	}
	p := u.Path
	if rest, ok := strings.CutPrefix(p, "/files/"); ok {
		if _, name, ok := strings.Cut(rest, "/"); ok && name != "" {
			return name
		}
	}
	if b := path.Base(p); b != "." && b != "/" && b != "" {
		return b
	}
	return "file"
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// num reads a JSON number decoded as float64 (or json.Number), or a size
// the go-sdk or mcpfile holds as an *int64; -1 if absent.
func num(v any) int64 {
	switch x := v.(type) {
	case *int64:
		if x != nil {
			return *x
		}
	case float64:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	case interface{ Int64() (int64, error) }:
		if n, err := x.Int64(); err == nil {
			return n
		}
	}
	return -1
}

// shortReason says why a file was not fetched, in words fit for a model (no
// URLs); the full error is in _meta[transfer.MetaFailed] and the log.
func shortReason(err error) string {
	switch {
	case errors.Is(err, transferclient.ErrForeignURL):
		return "its URL is on a host the client does not trust"
	case errors.Is(err, transferclient.ErrTooLarge):
		return "it is larger than the client accepts"
	case errors.Is(err, ErrStalled):
		return "the download stalled: the agent stopped sending it, or sent it too slowly"
	}
	return "the download failed"
}
