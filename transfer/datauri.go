package transfer

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strings"
)

// DataURIPrefix is the head of a base64 data URI (RFC 2397) carrying a
// file: "data:<type>;name=<percent-encoded name>;base64,". Only the media
// type of mimeType is kept (parameters could break the header); a missing
// or malformed one is application/octet-stream. An empty name is left out.
func DataURIPrefix(mimeType, name string) string {
	mt := "application/octet-stream"
	if parsed, _, err := mime.ParseMediaType(mimeType); err == nil && strings.Count(parsed, "/") == 1 {
		mt = parsed
	}
	if name == "" {
		return "data:" + mt + ";base64,"
	}
	return "data:" + mt + ";name=" + url.PathEscape(name) + ";base64,"
}

// DataURI reads r (size bytes, for the buffer; -1 when unknown) into a data
// URI carrying its type and name (DataURIPrefix), encoding as it reads.
func DataURI(r io.Reader, mimeType, name string, size int64) (string, error) {
	prefix := DataURIPrefix(mimeType, name)
	var b strings.Builder
	if size > 0 {
		b.Grow(len(prefix) + base64.StdEncoding.EncodedLen(int(size)))
	}
	b.WriteString(prefix)
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	if _, err := io.Copy(enc, r); err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}
