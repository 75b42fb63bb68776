package mcpfile

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"mime"
	"net/url"
	"strings"
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

// URI returns the file URI mcp-file://authority/kind/id.
func URI(authority, kind, id string) string {
	return (&url.URL{Scheme: Scheme, Host: authority, Path: "/" + kind + "/" + id}).String()
}

// ParseURI splits a file URI made by URI into its authority, kind and id;
// ok is false for anything else.
func ParseURI(s string) (authority, kind, id string, ok bool) {
	u, err := url.Parse(s)
	if err != nil || !strings.EqualFold(u.Scheme, Scheme) || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", "", "", false
	}
	kind, id, ok = strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if !ok || kind == "" || id == "" || strings.Contains(id, "/") {
		return "", "", "", false
	}
	return u.Host, kind, id, true
}
