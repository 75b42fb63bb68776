package client

import (
	"fmt"
	"strings"
	"unicode"
)

// maxNameBytes caps a registry name, folders included.
const maxNameBytes = 1024

// CleanName makes name safe as a registry name: backslashes become slashes,
// each folder segment loses control and bidi characters, surrounding blanks
// and leading dots (so no "..", no hidden files, no escape from the
// registry folder), empty segments vanish. Folders are kept:
// "images/diagram_002.png" stays as it is. A name with nothing left is an
// error.
func CleanName(name string) (string, error) {
	var segs []string
	for _, seg := range strings.Split(strings.ReplaceAll(name, `\`, "/"), "/") {
		seg = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == unicode.ReplacementChar {
				return -1
			}
			return r
		}, seg)
		seg = strings.TrimLeft(strings.TrimSpace(seg), ".")
		seg = strings.TrimSpace(seg)
		if seg != "" {
			segs = append(segs, seg)
		}
	}
	clean := strings.Join(segs, "/")
	if clean == "" {
		return "", fmt.Errorf("file name %q has no usable characters: give the file a name such as report.pdf", name)
	}
	if len(clean) > maxNameBytes {
		return "", fmt.Errorf("file name of %d bytes is too long: at most %d", len(clean), maxNameBytes)
	}
	return clean, nil
}
