package transport

import (
	"cmp"
	"mime"
	"net/url"
	"path"
	"strings"

	"github.com/agentura/agentura/filename"
)

// SanitizeName returns a safe base name for a file a caller named: folders
// are dropped (both / and \ separate them), control and invisible formatting
// characters removed, "." and ".." refused, the length capped at
// SanitizedNameBytes with the extension kept. It returns "" when nothing
// usable remains. It is filename.Base, shortened: inputs and outputs are
// named by the same rules.
func SanitizeName(name string) string {
	return filename.Shorten(filename.Base(name), SanitizedNameBytes)
}

// SanitizedNameBytes is the longest name SanitizeName returns: 55 bytes
// short of the file system's 255 (NAME_MAX), so that the names a tool
// derives from it (a prefix, a suffix, a new extension, " (2)") still fit.
const SanitizedNameBytes = 200

// NameFromContent derives a file name from a content string when the caller
// gave none: a data URI's name= parameter, a URL's last path segment, or the
// base of a path or bare file name. It returns "" for base64 and the like.
func NameFromContent(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case hasPrefixFold(s, "data:"):
		header, _, ok := strings.Cut(s[len("data:"):], ",")
		if !ok {
			return ""
		}
		return dataURIName(header)
	case hasPrefixFold(s, "http://"), hasPrefixFold(s, "https://"):
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		return SanitizeName(path.Base(u.Path))
	case looksLikeFileName(s):
		return SanitizeName(s)
	}
	return ""
}

// dataURIName returns the name= parameter of a data URI header
// ("image/png;name=chart.png;base64"), or "".
func dataURIName(header string) string {
	header = strings.TrimSuffix(header, ";base64")
	if header == "" {
		return ""
	}
	if strings.HasPrefix(header, ";") {
		header = "application/octet-stream" + header
	}
	_, params, err := mime.ParseMediaType(header)
	if err != nil {
		// Tolerate unquoted names with characters ParseMediaType rejects.
		for _, p := range strings.Split(header, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "name") {
				if dec, err := url.PathUnescape(v); err == nil {
					v = dec
				}
				return SanitizeName(strings.Trim(v, `"`))
			}
		}
		return ""
	}
	n := cmp.Or(params["name"], params["filename"])
	if dec, err := url.PathUnescape(n); err == nil {
		n = dec
	}
	return SanitizeName(n)
}

// looksLikeFileName reports whether s reads as a file name or path rather
// than encoded content: short, one line, with an extension in its last segment.
// A dot never occurs in base64, so such a string cannot be base64.
func looksLikeFileName(s string) bool {
	if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\n\r\t") {
		return false
	}
	base := s
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	ext := path.Ext(base)
	return len(ext) > 1 && len(ext) <= 10 && len(base) > len(ext)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// commonExtensions are the extensions of the types files most often have,
// where the system's table may say otherwise or nothing.
var commonExtensions = map[string]string{
	"application/pdf": ".pdf", "image/png": ".png", "image/jpeg": ".jpg", "image/tiff": ".tif",
	"image/gif": ".gif", "image/webp": ".webp", "image/bmp": ".bmp", "text/plain": ".txt",
	"text/markdown": ".md", "text/html": ".html", "text/csv": ".csv", "application/json": ".json",
	"application/zip": ".zip",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   ".docx",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         ".xlsx",
}

// nameForType names a file that came without a name (a data: URI without
// name=, as the draft MCP file contract sends them): base with the
// extension of mimeType, when one is known.
func nameForType(base, mimeType string) string {
	t, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return base
	}
	if ext, ok := commonExtensions[t]; ok {
		return base + ext
	}
	if exts, _ := mime.ExtensionsByType(t); len(exts) > 0 {
		return base + exts[0]
	}
	return base
}
