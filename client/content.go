package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
)

// Content blocks the go-sdk cannot decode. The go-sdk refuses a whole tool
// result when one of its content blocks has a type it does not know: the
// draft MCP file contract's {"type": "file"} block (mcpfile.ContentTypeFile),
// or a type of a later revision. The host would lose the answer, files and
// all. So the client rewrites such a block before the go-sdk reads it
// (readableResult): a file block becomes a resource_link to its file URI,
// which Collect resolves with files/authorizeDownload like any FileValue,
// and any other block becomes a text block saying what it was. Each keeps
// the block as sent under _meta[transfer.MetaContent]. This happens in the
// HTTP client of WithTasks, to every JSON-RPC answer over streamable HTTP,
// in the connection of ReadableTransport over any other transport, and to
// the result of a task.

// sdkContent are the content block types the go-sdk decodes.
var sdkContent = map[string]bool{"text": true, "image": true, "audio": true, "resource_link": true, "resource": true, "tool_use": true, "tool_result": true}

// readableMessage rewrites the result of a JSON-RPC response with
// readableResult; ok is false when there was nothing to rewrite.
func readableMessage(msg []byte) ([]byte, bool) {
	if !bytes.Contains(msg, []byte(`"content"`)) {
		return msg, false
	}
	return rewriteMember(msg, "result", readableResult)
}

// readableResult rewrites the content blocks of a tool result that the
// go-sdk cannot decode into blocks it can; ok is false when every block
// was readable (or result is no tool result).
func readableResult(result []byte) ([]byte, bool) {
	return rewriteMember(result, "content", func(content []byte) ([]byte, bool) {
		var blocks []json.RawMessage
		if json.Unmarshal(content, &blocks) != nil {
			return content, false
		}
		changed := false
		for i, b := range blocks {
			var head struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(b, &head) != nil || sdkContent[head.Type] {
				continue
			}
			if nb, err := json.Marshal(readableBlock(head.Type, b)); err == nil {
				blocks[i], changed = nb, true
			}
		}
		if !changed {
			return content, false
		}
		out, err := json.Marshal(blocks)
		return out, err == nil
	})
}

// rewriteMember returns the JSON object obj with its member key (nil when
// absent) replaced by what fn makes of it; ok is false, and obj returned
// as it is, when obj is no object or fn says it changed nothing.
func rewriteMember(obj []byte, key string, fn func([]byte) ([]byte, bool)) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || m == nil {
		return obj, false
	}
	v, ok := fn(m[key])
	if !ok {
		return obj, false
	}
	m[key] = v
	out, err := json.Marshal(m)
	if err != nil {
		return obj, false
	}
	return out, true
}

// readableBlock is what a block of type typ the go-sdk cannot decode
// becomes: a resource_link for a file block that names a file URI, else a
// text block; the block as sent is kept under _meta[transfer.MetaContent].
func readableBlock(typ string, block json.RawMessage) map[string]any {
	meta := map[string]any{transfer.MetaContent: block}
	if fv, ok := mcpfile.FileOfBlock(block); ok && typ == mcpfile.ContentTypeFile {
		name := cmp.Or(fv.Name, "file")
		link := map[string]any{"type": "resource_link", "uri": fv.URI, "name": name, "_meta": meta}
		if fv.MIMEType != "" {
			link["mimeType"] = fv.MIMEType
		}
		if fv.Size != nil {
			link["size"] = *fv.Size
		}
		if fv.Digest != nil {
			if sum, err := fv.Digest.Hex(); err == nil {
				meta[transfer.MetaSHA256] = sum
			}
		}
		return link
	}
	if len(typ) > 40 {
		typ = typ[:40] + "…"
	}
	return map[string]any{"type": "text", "text": fmt.Sprintf("[a content block of type %q, which this client cannot show]", typ), "_meta": meta}
}

// ReadableTransport wraps an MCP transport other than streamable HTTP (a
// stdio server's CommandTransport, say) so that answers whose content
// blocks the go-sdk cannot decode reach it rewritten, and the initialize of
// a client that declares files (DeclareFiles) carries capabilities.files,
// as WithTasks' HTTP client does over streamable HTTP. A *mcp.StreamableClientTransport is
// returned as it is: its connection tells the go-sdk session more than a
// wrapper could pass on, so give it an HTTP client from WithTasks instead.
func ReadableTransport(t mcp.Transport) mcp.Transport {
	if _, ok := t.(*mcp.StreamableClientTransport); ok {
		return t
	}
	return readableTransport{t}
}

type readableTransport struct{ t mcp.Transport }

func (r readableTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return readableConn{c}, nil
}

// readableConn rewrites the results of the responses it reads with
// readableResult, and declares files in the initialize it writes for a
// client that does (DeclareFiles).
type readableConn struct{ mcp.Connection }

func (c readableConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	declareFilesMessage(ctx, msg)
	return c.Connection.Write(ctx, msg)
}

func (c readableConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && len(r.Result) > 0 {
		if out, changed := readableResult(r.Result); changed {
			r.Result = out
		}
	}
	return m, err
}
