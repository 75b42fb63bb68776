package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The host side of the draft MCP file contract (SEP-2631, see
// transfer/mcpfile): with a server whose file fields carry x-mcp-file
// objects, a file goes inline or through files/authorizeUpload and its
// descriptor, as the field's transferModes and maxSize allow, and a
// produced file given only as a FileValue comes back through
// files/authorizeDownload. Servers that declare only x-file get what they
// always got.

// RegisterFileMethods lets c send files/authorizeUpload and
// files/authorizeDownload, and declares the draft's files capability
// (DeclareFiles). Attach does it; a host that calls tools another way (the
// gateway) calls it on its client.
func RegisterFileMethods(c *mcp.Client) {
	_ = mcp.AddSendingCustomMethod[*uploadParams, *uploadResult](c, mcpfile.MethodAuthorizeUpload)
	_ = mcp.AddSendingCustomMethod[*downloadParams, *downloadResult](c, mcpfile.MethodAuthorizeDownload)
	DeclareFiles(c)
}

type uploadParams struct {
	mcp.ParamsBase
	mcpfile.AuthorizeUploadParams
}

type downloadParams struct {
	mcp.ParamsBase
	mcpfile.AuthorizeDownloadParams
}

// authorized is the answer of files/authorizeUpload (T
// mcpfile.AuthorizeUploadResult) or files/authorizeDownload (T
// mcpfile.AuthorizedFile): decoded as far as it decodes, and as sent.
type authorized[T any] struct {
	mcp.ResultBase
	val T
	raw json.RawMessage
	err error // the decoding's, reported by AuthorizeUpload and AuthorizeDownload
}

type uploadResult = authorized[mcpfile.AuthorizeUploadResult]
type downloadResult = authorized[mcpfile.AuthorizedFile]

// UnmarshalJSON keeps the answer as sent and decodes what it can: an
// answer of another shape is the caller's to report, with what was sent.
func (r *authorized[T]) UnmarshalJSON(b []byte) error {
	r.raw = append(json.RawMessage(nil), b...)
	json.Unmarshal(b, &r.ResultBase)
	r.err = json.Unmarshal(b, &r.val)
	return nil
}

// answer returns what AuthorizeUpload and AuthorizeDownload return of the
// answer ans to their call, or of its error.
func answer[T any](ans *authorized[T], err error) (res T, raw json.RawMessage, _ error) {
	if err != nil {
		return res, nil, err
	}
	if ans.err != nil {
		return ans.val, ans.raw, fmt.Errorf("the answer %s is not of the draft's shape: %w", clipped(ans.raw), ans.err)
	}
	return ans.val, ans.raw, nil
}

// AuthorizeUpload sends files/authorizeUpload with p on session (whose
// client RegisterFileMethods prepared) and returns the answer, decoded and
// as sent (raw, also when it does not decode: then err says so). A host
// that checks servers (agentura check) reads the raw answer; the
// middleware uses the decoded one.
func AuthorizeUpload(ctx context.Context, session *mcp.ClientSession, p mcpfile.AuthorizeUploadParams) (res mcpfile.AuthorizeUploadResult, raw json.RawMessage, err error) {
	return answer(mcp.CallCustomMethod[*uploadParams, *uploadResult](ctx, session, mcpfile.MethodAuthorizeUpload, &uploadParams{AuthorizeUploadParams: p}))
}

// AuthorizeDownload sends files/authorizeDownload with p (and meta, nil
// for none) on session, and returns the answer as AuthorizeUpload does.
func AuthorizeDownload(ctx context.Context, session *mcp.ClientSession, p mcpfile.AuthorizeDownloadParams, meta mcp.Meta) (res mcpfile.AuthorizedFile, raw json.RawMessage, err error) {
	params := &downloadParams{AuthorizeDownloadParams: p}
	params.Meta = meta
	return answer(mcp.CallCustomMethod[*downloadParams, *downloadResult](ctx, session, mcpfile.MethodAuthorizeDownload, params))
}

// clipped is an answer shortened for an error, its URLs' queries left out.
func clipped(raw json.RawMessage) string {
	s := transfer.Redact(string(raw))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// declOf reads the x-mcp-file object of a schema node, or of one of its
// anyOf branches (an agentura agent declares it on the URI string branch of
// a {name, content} object or string, as SEP-2631 §5 wants it); nil when it
// has none (absent, or the older boolean form).
func declOf(n map[string]any) *mcpfile.Input {
	raw, ok := n[mcpfile.Keyword].(map[string]any)
	if !ok {
		branches, _ := n["anyOf"].([]any)
		for _, b := range branches {
			if bm, _ := b.(map[string]any); bm != nil {
				if raw, ok = bm[mcpfile.Keyword].(map[string]any); ok {
					break
				}
			}
		}
	}
	if !ok {
		return nil
	}
	params := mcpfile.Params(map[string]any{"properties": map[string]any{"f": map[string]any{mcpfile.Keyword: raw}}}, nil)
	if len(params) != 1 {
		return nil
	}
	return &params[0].Input
}

// fits refuses, before anything is sent, a file over the field's maxSize
// or, with types, of a type outside its accept list.
func fits(e Entry, name string, decl mcpfile.Input, types bool) error {
	if decl.MaxSize > 0 && e.Size > decl.MaxSize {
		return fmt.Errorf("%s is %d bytes; the tool takes files of at most %d bytes (its maxSize)", name, e.Size, decl.MaxSize)
	}
	if types && !mcpfile.Accepts(decl.Accept, e.MIMEType) {
		return fmt.Errorf("%s is %s; the tool takes %s", name, e.MIMEType, strings.Join(decl.Accept, ", "))
	}
	return nil
}

// sendDraft sends the registry file e to a field declared by decl: inline
// when the field allows it and the file is small (or upload is not
// allowed), else through files/authorizeUpload; a file with no mode this
// host can use is refused. object says the field takes {name, content}
// (an agentura agent), whose data URI may carry the name; the draft's own
// data URIs carry none.
func (m *Middleware) sendDraft(ctx context.Context, session *mcp.ClientSession, e Entry, name string, decl mcpfile.Input, object bool) (string, error) {
	small := m.cfg.InlineMaxBytes >= 0 && e.Size <= m.cfg.InlineMaxBytes
	inline, upload := decl.Allows(mcpfile.ModeInline), decl.Allows(mcpfile.ModeUpload)
	switch {
	case inline && (small || !upload):
		dataName := ""
		if object {
			dataName = name
		}
		why := "at most the inline limit"
		if !small {
			why = "the field takes files only inline (x-mcp-file transferModes), up to its maxSize"
		}
		return m.inline(e, dataName, why)
	case upload:
		if session == nil {
			return "", fmt.Errorf("%s must go through files/authorizeUpload, which needs the MCP session (Middleware.UseSession)", name)
		}
		uri, err := m.authorizedUpload(ctx, session, e, name)
		if err == nil {
			m.sent(e, "files/authorizeUpload", "over the inline limit, or the field takes no inline file")
		}
		return uri, err
	}
	return "", fmt.Errorf("%s: the tool allows the transfer modes %v, none of which this client knows (inline, upload)", name, decl.TransferModes)
}

// authorizedUpload asks the server where to send e, sends it there and
// returns the file URI to pass in the call.
func (m *Middleware) authorizedUpload(ctx context.Context, session *mcp.ClientSession, e Entry, name string) (string, error) {
	size := e.Size
	res, _, err := AuthorizeUpload(ctx, session, mcpfile.AuthorizeUploadParams{Name: name, MIMEType: e.MIMEType, Size: &size, Digest: mcpfile.SHA256(e.SHA256)})
	if err != nil {
		return "", fmt.Errorf("files/authorizeUpload for %s: %w", name, err)
	}
	if !mcpfile.IsFileURI(res.File.URI) {
		return "", fmt.Errorf("files/authorizeUpload for %s answered %q, which is not a file URI", name, transfer.Redact(res.File.URI))
	}
	if res.File.Size != nil && *res.File.Size != e.Size {
		return "", fmt.Errorf("files/authorizeUpload for %s answered a size of %d for a file of %d bytes", name, *res.File.Size, e.Size)
	}
	f, err := openEntry(e)
	if err != nil {
		return "", err
	}
	defer f.Close()
	body := &progressReader{r: f, p: Progress{Direction: Upload, Name: name, Total: e.Size}, fn: m.cfg.Progress}
	if err := m.sendToDescriptor(ctx, res.Upload, body, e.Size, name, e.MIMEType); err != nil {
		return "", err
	}
	body.finish()
	return res.File.URI, nil
}

// checkDescriptor refuses a descriptor this host will not follow: one
// that mcpfile.TransferDescriptor.Check refuses, or whose URL is on a host
// the client does not trust (the agent's origin and Config.AllowHosts, as
// for downloads).
func (m *Middleware) checkDescriptor(d mcpfile.TransferDescriptor, methods ...string) error {
	if err := d.Check(time.Now(), methods...); err != nil {
		return err
	}
	u, err := url.Parse(d.URL)
	if err != nil {
		return err
	}
	return m.guard().Check(u)
}

// sendToDescriptor sends size bytes of r as an upload descriptor of the
// agent's says, once checkDescriptor accepts it.
func (m *Middleware) sendToDescriptor(ctx context.Context, d mcpfile.TransferDescriptor, r io.Reader, size int64, name, mimeType string) error {
	if err := m.checkDescriptor(d, http.MethodPut, http.MethodPost); err != nil {
		return fmt.Errorf("upload %s: %w", name, err)
	}
	return SendToDescriptor(ctx, m.hc, d, r, size, name, mimeType)
}

// SendToDescriptor sends size bytes of r, the file name of type mimeType,
// as an upload descriptor of the draft MCP file contract says: the raw
// body with its method, or a multipart POST with its fields; no redirect is
// followed. It checks the descriptor's form (TransferDescriptor.Check),
// not whether its host is to be trusted: that is the caller's to decide.
func SendToDescriptor(ctx context.Context, hc *http.Client, d mcpfile.TransferDescriptor, r io.Reader, size int64, name, mimeType string) error {
	if err := d.Check(time.Now(), http.MethodPut, http.MethodPost); err != nil {
		return fmt.Errorf("upload %s: %w", name, err)
	}
	hc = cmp.Or(hc, http.DefaultClient)
	var body io.Reader = r
	contentType := ""
	if d.Multipart != nil {
		body, contentType, size = multipartBody(r, d.Multipart.FileField, d.Multipart.Fields, name, mimeType, size)
	}
	req, err := http.NewRequestWithContext(ctx, d.Method, d.URL, body)
	if err != nil {
		return fmt.Errorf("upload %s: %w", name, err)
	}
	req.ContentLength = size
	for k, v := range d.Headers {
		if d.Multipart != nil && strings.EqualFold(k, "Content-Type") {
			continue
		}
		req.Header.Set(k, v)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := noRedirect(hc).Do(req)
	if err != nil {
		return fmt.Errorf("upload %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("upload %s: the server answered %s: %s", name, resp.Status, transfer.Redact(strings.TrimSpace(string(b))))
	}
	return nil
}

// multipartBody streams r as the file field of a multipart/form-data body
// after the other fields, and says its content type and length.
func multipartBody(r io.Reader, field string, fields map[string]string, name, mimeType string, size int64) (io.Reader, string, int64) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		mw.WriteField(k, fields[k])
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": field, "filename": name}))
	h.Set("Content-Type", mimeType)
	mw.CreatePart(h)
	head := bytes.Clone(buf.Bytes())
	buf.Reset()
	mw.Close()
	tail := bytes.Clone(buf.Bytes())
	return io.MultiReader(bytes.NewReader(head), r, bytes.NewReader(tail)), mw.FormDataContentType(), int64(len(head)) + size + int64(len(tail))
}

// noRedirect is hc following no redirect: a descriptor names where the
// bytes go, and the reference host follows none either.
func noRedirect(hc *http.Client) *http.Client {
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// downloadURL resolves a produced file's file URI with
// files/authorizeDownload and returns the descriptor's URL, with the size
// and hex sha256 the answer states (-1, "" when it states none). handle is
// the owner handle of the result that named the file ("" for none): an
// agent without authentication authorizes a file only in the scope it was
// produced in, which for a sessionless caller is that handle.
func (m *Middleware) downloadURL(ctx context.Context, session *mcp.ClientSession, uri, handle string) (string, int64, string, error) {
	if session == nil {
		return "", -1, "", errors.New("a file URI needs files/authorizeDownload, which needs the MCP session (Middleware.UseSession)")
	}
	var meta mcp.Meta
	if handle != "" {
		meta = mcp.Meta{transfer.MetaOwner: handle}
	}
	res, _, err := AuthorizeDownload(ctx, session, mcpfile.AuthorizeDownloadParams{URI: uri}, meta)
	if err != nil {
		return "", -1, "", fmt.Errorf("files/authorizeDownload: %w", err)
	}
	if res.File.URI != uri || res.Download == nil {
		return "", -1, "", errors.New("files/authorizeDownload answered another file, or no download descriptor")
	}
	if err := m.checkDescriptor(*res.Download, http.MethodGet); err != nil {
		return "", -1, "", err
	}
	if len(res.Download.Headers) > 0 {
		return "", -1, "", errors.New("the download descriptor asks for request headers, which this client does not send")
	}
	size, sum := num(res.File.Size), ""
	if res.File.Digest != nil {
		if sum, err = res.File.Digest.Hex(); err != nil {
			return "", -1, "", err
		}
	}
	return res.Download.URL, size, sum, nil
}

// fileValues gives fn, in order, the FileValues of structured content that
// stand alone (no download_url beside them): a draft server's outputs. The
// reference host looks for them anywhere; so does this.
func fileValues(v any, fn func(mcpfile.FileValue)) {
	switch x := v.(type) {
	case []any:
		for _, i := range x {
			fileValues(i, fn)
		}
	case map[string]any:
		if _, ours := x["download_url"]; ours {
			return // an agentura file: its download_url is fetched
		}
		if uri, _ := x["uri"].(string); mcpfile.IsFileURI(uri) && x["type"] != "resource_link" {
			b, _ := json.Marshal(x)
			var fv mcpfile.FileValue
			if json.Unmarshal(b, &fv) == nil {
				fn(fv)
			}
			return
		}
		for _, k := range slices.Sorted(maps.Keys(x)) { // in the same order each time
			fileValues(x[k], fn)
		}
	}
}
