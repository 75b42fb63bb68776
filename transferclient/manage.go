package transferclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentura/agentura/transfer"
)

// DeleteFile deletes the file a download URL of an agent names, now rather
// than at the end of its TTL: a host's "forget my upload". hc carries the
// caller's identity (WithBearer) when the agent authenticates callers: only
// the file's owner may delete it. A file already gone is not an error.
func DeleteFile(ctx context.Context, hc *http.Client, fileURL string) error {
	return send(ctx, hc, http.MethodDelete, fileURL, "", nil, "delete "+transfer.Redact(fileURL), http.StatusNoContent, http.StatusNotFound)
}

// RevokeURL ends one download URL of an agent on every replica (POST
// transfer.RevokePath); the file and its other URLs stay. Whoever holds a URL may
// revoke it.
func RevokeURL(ctx context.Context, hc *http.Client, fileURL string) error {
	u, err := url.Parse(fileURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("revoke %s: not an absolute URL", transfer.Redact(fileURL))
	}
	endpoint := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: revokePathUnder(u.Path)}).String()
	body, _ := json.Marshal(transfer.RevokeRequest{URL: fileURL})
	return send(ctx, hc, http.MethodPost, endpoint, "application/json", bytes.NewReader(body), "revoke "+transfer.Redact(fileURL), http.StatusNoContent)
}

// send makes a request of a file route of an agent (a deletion, a
// revocation) through hc and wants one of the statuses ok; its errors start
// with what.
func send(ctx context.Context, hc *http.Client, method, rawURL, contentType string, body io.Reader, what string, ok ...int) error {
	req, err := newRequest(ctx, method, rawURL, body)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	if !slices.Contains(ok, resp.StatusCode) {
		return fmt.Errorf("%s: %s", what, Describe(resp))
	}
	return nil
}

// revokePathUnder is transfer.RevokePath under the base path of a download URL's
// path (<base>/files/<id>/<name>), for an agent served below a prefix.
func revokePathUnder(p string) string {
	if i := strings.LastIndex(p, "/files/"); i >= 0 {
		return p[:i] + transfer.RevokePath
	}
	return transfer.RevokePath
}
