package transferclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentura/agentura/transfer"
)

// maxAnswerBytes caps the JSON answer of /uploads that is read.
const maxAnswerBytes = 64 << 10

// ErrNoUploadEndpoint marks an upload the server refused because it has no
// such endpoint (404, 405, 415 or 501 to the request that starts it): a
// server that takes files only inline. A host may send the file inline
// instead.
var ErrNoUploadEndpoint = errors.New("the server offers no upload endpoint")

// noUploadEndpoint reports whether status, answering the request that
// starts an upload, says there is no upload endpoint. 415 is the answer of
// a server that serves its MCP handler on every path (the handler wants
// JSON); an agent's /uploads and tus take any type of body and never
// answer it.
func noUploadEndpoint(status int) bool {
	switch status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType, http.StatusNotImplemented:
		return true
	}
	return false
}

// SendUpload stages a file with an agent: it POSTs body (size bytes, or -1
// when unknown) to endpoint, the agent's /uploads, as a raw body named by
// the X-Filename header, and returns the agent's answer, whose URL is a
// signed URL usable as the content of a FileAttachment. hc carries the
// caller's identity (WithBearer) when the agent wants one.
func SendUpload(ctx context.Context, hc *http.Client, endpoint, name string, body io.Reader, size int64) (transfer.Upload, error) {
	req, err := newRequest(ctx, http.MethodPost, endpoint, body)
	if err != nil {
		return transfer.Upload{}, fmt.Errorf("upload %s to %s: %w", name, transfer.Redact(endpoint), err)
	}
	if size >= 0 {
		req.ContentLength = size
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set(transfer.HeaderFilename, "UTF-8''"+url.PathEscape(name))
	resp, err := hc.Do(req)
	if err != nil {
		return transfer.Upload{}, fmt.Errorf("upload %s to %s: %w", name, transfer.Redact(endpoint), err)
	}
	defer resp.Body.Close()
	if noUploadEndpoint(resp.StatusCode) {
		return transfer.Upload{}, fmt.Errorf("upload %s to %s: %s (%w)", name, transfer.Redact(endpoint), Describe(resp), ErrNoUploadEndpoint)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return transfer.Upload{}, fmt.Errorf("upload %s to %s: %s", name, transfer.Redact(endpoint), Describe(resp))
	}
	var up transfer.Upload
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswerBytes)).Decode(&up); err != nil {
		return transfer.Upload{}, fmt.Errorf("upload %s: the agent's answer is not the JSON of %s: %w", name, transfer.UploadsPath, err)
	}
	if up.URL == "" {
		return transfer.Upload{}, fmt.Errorf("upload %s: the agent answered without a url", name)
	}
	return up, nil
}

// Describe describes an error answer for a message: its status and the
// agent's JSON reason ({"error": ...}) or the start of its body. It reads
// (at most 4 KiB of) the body.
func Describe(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	var e transfer.Error
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return resp.Status + ": " + e.Error
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		return resp.Status + ": " + s
	}
	return resp.Status
}
