package transferclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentura/agentura/transfer"
)

// DeleteFile deletes the file a download URL of an agent names, now rather
// than at the end of its TTL: a host's "forget my upload". hc carries the
// caller's identity (WithBearer) when the agent authenticates callers: only
// the file's owner may delete it. A file already gone is not an error.
func DeleteFile(ctx context.Context, hc *http.Client, fileURL string) error {
	req, err := newRequest(ctx, http.MethodDelete, fileURL, nil)
	if err != nil {
		return fmt.Errorf("delete %s: %w", transfer.Redact(fileURL), err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("delete %s: %w", transfer.Redact(fileURL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("delete %s: %s", transfer.Redact(fileURL), Describe(resp))
	}
	return nil
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
	req, err := newRequest(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("revoke %s: %w", transfer.Redact(fileURL), err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("revoke %s: %w", transfer.Redact(fileURL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("revoke %s: %s", transfer.Redact(fileURL), Describe(resp))
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
