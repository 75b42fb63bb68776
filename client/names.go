package client

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/agentura/agentura/filename"
)

// CleanName makes name safe as a registry name. It cleans as the agents
// clean display names (filename.Clean: backslashes become slashes;
// empty, "." and ".." segments go; control and invisible formatting
// characters such as bidi overrides go; a segment over 255 bytes is
// shortened, keeping its extension) and takes leading dots off each
// segment, so there are no hidden files either. Folders are kept:
// "images/diagram_002.png" stays as it is. A name with nothing left is an
// error.
func CleanName(name string) (string, error) {
	var segs []string
	if filename.Base(name) != "" {
		for _, seg := range strings.Split(filename.Clean(name), "/") {
			seg = strings.TrimLeftFunc(seg, func(r rune) bool { return r == '.' || unicode.IsSpace(r) })
			if seg != "" {
				segs = append(segs, seg)
			}
		}
	}
	if len(segs) == 0 {
		return "", fmt.Errorf("file name %q has no usable characters: give the file a name such as report.pdf", name)
	}
	return strings.Join(segs, "/"), nil
}
