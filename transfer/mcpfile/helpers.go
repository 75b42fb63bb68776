package mcpfile

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Reasons of refusals, in the error data of a JSON-RPC error (ErrorData), so
// that a host can tell them apart and show them. maxSizeExceeded is the
// draft's example; the others follow its style.
const (
	ReasonMaxSizeExceeded = "maxSizeExceeded"
	ReasonTypeNotAccepted = "typeNotAccepted"
	ReasonQuotaExceeded   = "quotaExceeded"
	ReasonDigestMismatch  = "digestMismatch"
	ReasonSizeMismatch    = "sizeMismatch"
	ReasonTypeMismatch    = "typeMismatch"
	ReasonBadDigest       = "unsupportedDigest"
	ReasonUnknownFile     = "unknownFile"
	ReasonNotUploaded     = "notUploaded"
)

// JSON-RPC error codes the draft names (§10).
const (
	CodeMethodNotFound = -32601 // the method is not served
	CodeInvalidParams  = -32602 // malformed URI, or a declared constraint broken
	CodeInternal       = -32603 // a failure resolving a descriptor
)

// ErrorData is the data of a JSON-RPC error refusing a file.
type ErrorData struct {
	Reason     string   `json:"reason"`
	MaxSize    int64    `json:"maxSize,omitempty"`
	ActualSize int64    `json:"actualSize,omitempty"`
	Accept     []string `json:"accept,omitempty"`
	MIMEType   string   `json:"mimeType,omitempty"`
}

// SHA256 returns the digest of a sha256 sum given in lowercase or
// uppercase hex, as agentura's stores keep it, or nil when hexSum is not 64
// hex digits.
func SHA256(hexSum string) *Digest {
	raw, err := hex.DecodeString(hexSum)
	if err != nil || len(raw) != sha256.Size {
		return nil
	}
	return &Digest{Algorithm: DigestSHA256, Value: base64.RawURLEncoding.EncodeToString(raw)}
}

// Hex returns the digest's value as lowercase hex, for a sha-256 digest
// whose value is base64url without padding (padding and the standard
// alphabet are tolerated); otherwise an error saying what is wrong.
func (d Digest) Hex() (string, error) {
	if !strings.EqualFold(d.Algorithm, DigestSHA256) {
		return "", fmt.Errorf("digest algorithm %q is not supported; use %q", d.Algorithm, DigestSHA256)
	}
	v := strings.TrimRight(d.Value, "=")
	v = strings.NewReplacer("+", "-", "/", "_").Replace(v)
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(raw) != sha256.Size {
		return "", fmt.Errorf("digest value %q is not a sha-256 sum in base64url (43 characters)", d.Value)
	}
	return hex.EncodeToString(raw), nil
}

// Accepts reports whether a file of type mimeType fits accept: an empty
// list, "*/*", the type itself or its "type/*". Extension entries (".pdf")
// are picker hints and never match, as the draft says; a list of extensions
// only accepts everything.
func Accepts(accept []string, mimeType string) bool {
	base, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		base = strings.ToLower(strings.TrimSpace(mimeType))
	}
	constrained := false
	for _, a := range accept {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == "" || strings.HasPrefix(a, ".") {
			continue
		}
		constrained = true
		if a == "*/*" || a == base {
			return true
		}
		if prefix, ok := strings.CutSuffix(a, "/*"); ok && strings.HasPrefix(base, prefix+"/") {
			return true
		}
	}
	return !constrained
}

// IsFileURI reports whether s reads as a file URI as the reference host
// decides it: an absolute URI whose scheme is not data, file, http or
// https.
func IsFileURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "data", "file", "http", "https":
		return false
	}
	return true
}

// FileOfBlock reads the FileValue of a content block of type
// ContentTypeFile, given as its JSON: the FileValue under "file" (the
// SEP's FileContent, {"type": "file", "file": {...}}), else the block itself
// (a FileValue written flat into the block); a uri under "content" (the
// SEP's earlier payload, {"content": {"uri": ...}}) is read too. ok is
// false when the block names no file URI (IsFileURI). The FileValue under
// "file" is read as one, once: a block nested in it is not looked into, so
// a hostile block costs one pass over its JSON however deep it nests.
func FileOfBlock(block []byte) (fv FileValue, ok bool) {
	var b struct {
		FileValue
		File    json.RawMessage `json:"file"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(block, &b) != nil {
		return FileValue{}, false
	}
	if len(b.File) > 0 && b.File[0] == '{' {
		if json.Unmarshal(b.File, &fv) != nil {
			return FileValue{}, false
		}
		return fv, IsFileURI(fv.URI)
	}
	fv = b.FileValue
	if fv.URI == "" {
		var payload struct {
			URI string `json:"uri"`
		}
		json.Unmarshal(b.Content, &payload)
		fv.URI = payload.URI
	}
	return fv, IsFileURI(fv.URI)
}

// URI returns the file URI mcp-file://authority/kind/id.
func URI(authority, kind, id string) string {
	return (&url.URL{Scheme: Scheme, Host: authority, Path: "/" + kind + "/" + id}).String()
}

// CapabilityURI returns the file URI mcp-file://authority/kind/id?token=…:
// a URI that names the file and carries the capability to it, so that
// whoever holds it (and nobody else) can resolve it, as whoever holds a
// signed download URL can fetch it. A host treats it as opaque, as every
// file URI.
func CapabilityURI(authority, kind, id, token string) string {
	return (&url.URL{Scheme: Scheme, Host: authority, Path: "/" + kind + "/" + id, RawQuery: url.Values{"token": {token}}.Encode()}).String()
}

// ParseURI splits a file URI made by URI or CapabilityURI into its
// authority, kind, id and token ("" for none); ok is false for anything
// else.
func ParseURI(s string) (authority, kind, id, token string, ok bool) {
	u, err := url.Parse(s)
	if err != nil || !strings.EqualFold(u.Scheme, Scheme) || u.Host == "" || u.Fragment != "" || u.User != nil {
		return "", "", "", "", false
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil || len(q) != 1 || len(q["token"]) != 1 || q.Get("token") == "" {
			return "", "", "", "", false
		}
		token = q.Get("token")
	}
	kind, id, ok = strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if !ok || kind == "" || id == "" || strings.Contains(id, "/") {
		return "", "", "", "", false
	}
	return u.Host, kind, id, token, true
}

// forbiddenHeaders are headers a descriptor may not ask for: hop-by-hop
// ones, Host and Content-Length (the reference host refuses them too).
var forbiddenHeaders = map[string]bool{"connection": true, "content-length": true, "host": true, "proxy-authenticate": true,
	"proxy-authorization": true, "te": true, "trailer": true, "transfer-encoding": true, "upgrade": true}

// Check says what is wrong with a descriptor a host is to follow with one
// of methods: another transport or method, a multipart form on another
// method than POST or without its file field, an expiry that is malformed
// or past, a URL that is not http(s) or carries credentials, a forbidden
// header. now is the time to judge expiry by.
func (d TransferDescriptor) Check(now time.Time, methods ...string) error {
	if d.Transport != TransportHTTPS {
		return fmt.Errorf("the transfer descriptor's transport is %q, not %q", d.Transport, TransportHTTPS)
	}
	if !slices.Contains(methods, d.Method) {
		return fmt.Errorf("the transfer descriptor's method is %q; want %s", d.Method, strings.Join(methods, " or "))
	}
	if d.Multipart != nil && (d.Method != "POST" || d.Multipart.FileField == "") {
		return errors.New("a multipart transfer descriptor needs method POST and a fileField")
	}
	if d.ExpiresAt != "" {
		if t, err := time.Parse(time.RFC3339, d.ExpiresAt); err != nil {
			return fmt.Errorf("the transfer descriptor's expiresAt %q is not an RFC 3339 time", d.ExpiresAt)
		} else if !t.After(now) {
			return fmt.Errorf("the transfer descriptor expired at %s", d.ExpiresAt)
		}
	}
	u, err := url.Parse(d.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return errors.New("the transfer descriptor's URL is not an http(s) URL without credentials")
	}
	for k := range d.Headers {
		if forbiddenHeaders[strings.ToLower(k)] {
			return fmt.Errorf("the transfer descriptor sets the header %s, which a server may not set", k)
		}
	}
	return nil
}
