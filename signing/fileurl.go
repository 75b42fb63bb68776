package signing

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// filesPath is where a file service serves downloads, below its public URL.
const filesPath = "/files/"

// FileURL signs c and returns the download URL of the file c names, in the
// one form an agent's file service hands out and serves:
//
//	<base>/files/<c.FileID>/<name>?token=<JWT>
//
// It is the only builder of these URLs: the agents' file service calls it,
// and so can a program beside the agents that opens the same store with the
// same keys (AGENT_SIGNING_KEY) to hand out links to its files.
//
// base is the public URL of the file service that will answer the download
// (AGENT_PUBLIC_URL), normally the Signer's audience, which is what the
// token is checked against; a trailing slash is ignored. It must be an
// absolute http(s) URL without query or fragment.
//
// name is the file's display name as its store keeps it (fileserve.Meta.Name,
// cleaned by filename.Clean). Each of its segments is escaped and the slashes
// between them are kept, so "images/a b.png" becomes "images/a%20b.png". The
// name is there for people and for clients that take a file name from the
// URL; the token binds the owner, the file id and the area, not the name. A
// name the file service would refuse or a store never keeps (empty, with an
// empty or dot-only segment, a backslash, a control character or invalid
// UTF-8) is an error, as is a file id that is not one plain path segment.
func (s *Signer) FileURL(base string, c Claims, name string) (string, error) {
	base = strings.TrimRight(base, "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(base, "?#") {
		return "", fmt.Errorf("signing: base URL %q must be an absolute http(s) URL without query, such as http://localhost:8001 (AGENT_PUBLIC_URL)", base)
	}
	if c.FileID != "" && (url.PathEscape(c.FileID) != c.FileID || strings.Trim(c.FileID, ".") == "") {
		return "", fmt.Errorf("signing: file id %q is not one plain path segment", c.FileID)
	}
	escaped, ok := escapeName(name)
	if !ok {
		return "", fmt.Errorf("signing: file name %q is not a clean display name (empty, an empty or dot-only segment, a backslash, a control character or invalid UTF-8); pass the name the store keeps (filename.Clean)", name)
	}
	tok, err := s.Sign(c)
	if err != nil {
		return "", err
	}
	return base + filesPath + c.FileID + "/" + escaped + "?token=" + tok, nil
}

// escapeName escapes each segment of a clean display name for a URL path,
// keeping the slashes between them; ok is false when name is not clean.
func escapeName(name string) (escaped string, ok bool) {
	if name == "" || !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r == '\\' || r < 0x20 || r == 0x7f }) {
		return "", false
	}
	segs := strings.Split(name, "/")
	for i, seg := range segs {
		if strings.Trim(seg, ".") == "" {
			return "", false
		}
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/"), true
}
