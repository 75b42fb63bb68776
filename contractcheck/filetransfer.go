package contractcheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The draft MCP file contract (SEP-2631 at c3cf0eba, transfer/mcpfile)
// adds two methods a server may offer: files/authorizeUpload hands a
// client a file URI and where to send its bytes, files/authorizeDownload
// where to fetch a file by its URI. This point drives them with the
// sample: the shapes of both answers exactly as the draft and its
// reference host (openai/codex) read them, the upload itself, and the
// download of what was uploaded — or, when the server does not hand
// uploads back, of a file a tool produced as a FileValue.

// answered is the answer of one of the draft's methods as sent, from the
// client package's call of it (client.AuthorizeUpload,
// client.AuthorizeDownload); err only when there is none (a JSON-RPC
// refusal, a plain HTTP answer, a broken connection). The shape is the
// check's to judge (shapeOf).
func answered[T any](_ T, raw json.RawMessage, err error) (json.RawMessage, error) {
	if raw != nil {
		return raw, nil
	}
	return nil, err
}

// authorizeDownloadRaw sends files/authorizeDownload for uri (answered).
func (c *checker) authorizeDownloadRaw(ctx context.Context, uri string) (json.RawMessage, error) {
	return answered(client.AuthorizeDownload(ctx, c.s, mcpfile.AuthorizeDownloadParams{URI: uri}, nil))
}

// fileTransfer runs the draft's round trip with smp (and, for downloads,
// the FileValues of res). It runs last: a server that answers an unknown
// method with a plain HTTP error (rather than JSON-RPC's "method not
// found") may end the session.
func (c *checker) fileTransfer(ctx context.Context, smp sample, res *mcp.CallToolResult) {
	if smp.data == nil {
		smp = makeSample(kinds[len(kinds)-1])
	}
	sum := sha256.Sum256(smp.data)
	size := int64(len(smp.data))
	digest := mcpfile.SHA256(hex.EncodeToString(sum[:]))
	cctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	raw, err := answered(client.AuthorizeUpload(cctx, c.s, mcpfile.AuthorizeUploadParams{Name: smp.name, MIMEType: smp.mime, Size: &size, Digest: digest}))
	var rpc *jsonrpc.Error
	switch {
	case err == nil:
	case errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound, unknownMethod(err):
		c.downloadOnly(cctx, res, "its answer: method not found")
		return
	case c.redial(ctx, err):
		// A plain HTTP refusal, which broke the session (a new one is open):
		// the go-sdk's server answers a method it does not know so.
		status, _ := httpRefusal(err)
		c.downloadOnly(cctx, res, fmt.Sprintf("it answered HTTP %s, no JSON-RPC answer, as a server without the method does; the draft's §10 asks for -32601, \"method not found\"", status))
		return
	case errors.As(err, &rpc):
		c.r.add(PointFileTransfer, Pass, "files/authorizeUpload refused the sample %s (%s): %d %s %s", smp.name, smp.mime, rpc.Code, rpc.Message, rpc.Data)
		return
	default:
		c.r.add(PointFileTransfer, Skip, "files/authorizeUpload: %v", err)
		return
	}
	var up mcpfile.AuthorizeUploadResult
	bad := shapeOf(raw, &up, "files/authorizeUpload", "file", "upload")
	bad = append(bad, badFileValue("files/authorizeUpload file", up.File, size, digest)...)
	if err := up.Upload.Check(time.Now(), http.MethodPut, http.MethodPost); err != nil {
		bad = append(bad, "files/authorizeUpload upload: "+err.Error())
	}
	if len(bad) > 0 {
		c.r.add(PointFileTransfer, Fail, "%s\nanswer: %s", strings.Join(bad, "\n"), clip(string(raw), 400))
		return
	}
	if err := c.refused(up.Upload.URL); err != nil {
		c.r.add(PointFileTransfer, Fail, "the upload descriptor's URL (%s): not sent: %v", transfer.Redact(up.Upload.URL), err)
		return
	}
	if err := client.SendToDescriptor(cctx, c.hc, up.Upload, bytes.NewReader(smp.data), size, smp.name, smp.mime); err != nil {
		c.r.add(PointFileTransfer, Fail, "the upload to the descriptor (%s %s): %v", up.Upload.Method, clip(up.Upload.URL, 80), err)
		return
	}
	sent := fmt.Sprintf("files/authorizeUpload: %s, %s %s descriptor; %d bytes sent", up.File.URI, up.Upload.Method, up.Upload.Transport, size)
	if got, err := c.fetchFileURI(cctx, up.File.URI, sum[:]); err != nil {
		c.r.add(PointFileTransfer, Fail, "%s\nfiles/authorizeDownload of the upload: %v", sent, err)
	} else {
		c.r.add(PointFileTransfer, Pass, "%s\n%s", sent, got)
	}
}

// downloadOnly checks files/authorizeDownload alone, on a FileValue of
// res, for a server that takes no uploads the draft's way (why says how
// files/authorizeUpload was refused).
func (c *checker) downloadOnly(ctx context.Context, res *mcp.CallToolResult, why string) {
	why = "the server does not offer files/authorizeUpload (" + why + ")"
	uri := firstFileValue(res)
	if uri == "" {
		c.r.add(PointFileTransfer, NotOffered, "%s, and no output of it is a FileValue to fetch with files/authorizeDownload: it offers neither of the draft's file-transfer methods (optional: the draft's way to hand out upload and download URLs)", why)
		return
	}
	got, err := c.fetchFileURI(ctx, uri, nil)
	if err != nil {
		c.r.add(PointFileTransfer, Fail, "%s; files/authorizeDownload of the output %s: %v", why, uri, err)
		return
	}
	c.r.add(PointFileTransfer, Pass, "%s; %s", why, got)
}

// fetchFileURI resolves uri with files/authorizeDownload, checks the
// answer's shape and fetches the bytes, checking size and digest (and
// want, a sha256, when given).
func (c *checker) fetchFileURI(ctx context.Context, uri string, want []byte) (string, error) {
	raw, err := c.authorizeDownloadRaw(ctx, uri)
	if err != nil {
		return "", err
	}
	var dl mcpfile.AuthorizedFile
	bad := shapeOf(raw, &dl, "files/authorizeDownload", "file", "download")
	if dl.File.URI != uri {
		bad = append(bad, fmt.Sprintf("files/authorizeDownload answered the file %q for %q", dl.File.URI, uri))
	}
	bad = append(bad, badFileValue("files/authorizeDownload file", dl.File, -1, nil)...)
	if dl.Download == nil {
		bad = append(bad, "files/authorizeDownload has no download descriptor")
	} else if err := dl.Download.Check(time.Now(), http.MethodGet); err != nil {
		bad = append(bad, "files/authorizeDownload download: "+err.Error())
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("%s\nanswer: %s", strings.Join(bad, "\n"), clip(string(raw), 400))
	}
	if err := c.refused(dl.Download.URL); err != nil {
		return "", fmt.Errorf("the download descriptor's URL (%s): not fetched: %w", transfer.Redact(dl.Download.URL), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, dl.Download.URL, nil)
	if err != nil {
		return "", err
	}
	for k, v := range dl.Download.Headers {
		req.Header.Set(k, v)
	}
	// A copy of c.hc is under the guard still (its transport refuses).
	hc := *c.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse } // the reference host follows none
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET of the download descriptor: %s %v (redirects are not followed, as by the reference host)", resp.Status, err)
	}
	got := sha256.Sum256(body)
	if dl.File.Size != nil && *dl.File.Size != int64(len(body)) {
		return "", fmt.Errorf("the download has %d bytes, its FileValue says %d", len(body), *dl.File.Size)
	}
	if dl.File.Digest != nil {
		if h, err := dl.File.Digest.Hex(); err != nil || h != hex.EncodeToString(got[:]) {
			return "", fmt.Errorf("the download's sha-256 is not its FileValue's digest (%v)", err)
		}
	}
	if want != nil && !bytes.Equal(want, got[:]) {
		return "", errors.New("the download is not the bytes uploaded")
	}
	return fmt.Sprintf("files/authorizeDownload: GET descriptor, %d bytes, digest checked", len(body)), nil
}

// shapeOf decodes raw into v, and says what of the draft's shape is
// missing or of another type: the keys in need, and every field's type.
func shapeOf(raw json.RawMessage, v any, what string, need ...string) []string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return []string{what + ": the answer is not an object"}
	}
	var bad []string
	for _, k := range need {
		if _, ok := m[k]; !ok {
			bad = append(bad, fmt.Sprintf("%s: the answer has no %q", what, k))
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		bad = append(bad, fmt.Sprintf("%s: the answer is not of the draft's shape: %v", what, err))
	}
	return bad
}

// badFileValue lists what is wrong with a FileValue: a URI the reference
// host does not take as a file URI, a size or digest that is not the
// file's (size -1, digest nil: not known here).
func badFileValue(what string, f mcpfile.FileValue, size int64, digest *mcpfile.Digest) []string {
	var bad []string
	if !mcpfile.IsFileURI(f.URI) {
		bad = append(bad, fmt.Sprintf("%s: uri %q is not a file URI (an absolute URI whose scheme is not data, file, http or https)", what, f.URI))
	}
	if size >= 0 && f.Size != nil && *f.Size != size {
		bad = append(bad, fmt.Sprintf("%s: size %d, the file has %d", what, *f.Size, size))
	}
	if f.Digest != nil {
		if _, err := f.Digest.Hex(); err != nil {
			bad = append(bad, fmt.Sprintf("%s: digest: %v", what, err))
		} else if digest != nil && *f.Digest != *digest {
			bad = append(bad, fmt.Sprintf("%s: digest %s is not the file's %s", what, f.Digest.Value, digest.Value))
		}
	}
	return bad
}

// firstFileValue returns the URI of the first FileValue of a result, in
// its structured content or a file content block, the way the reference
// host finds them; "" if none.
func firstFileValue(res *mcp.CallToolResult) string {
	if fvs := resultFiles(res); len(fvs) > 0 {
		return fvs[0].fv.URI
	}
	return ""
}

// unknownMethod reports whether err is a server's plain refusal of a method
// it does not know.
func unknownMethod(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "method not found") || strings.Contains(s, "unsupported method") || strings.Contains(s, "unknown method")
}
