package fileserve

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a display name after CleanName.
const (
	// MaxNameSegmentBytes is the longest segment (file or folder name) kept,
	// the limit of common file systems.
	MaxNameSegmentBytes = 255
	// MaxNameBytes is the longest whole name kept; leading folders are
	// dropped to fit.
	MaxNameBytes = 1024
	// maxExtBytes is the longest extension kept when a segment is shortened.
	maxExtBytes = 32
)

// DefaultName is the name of a file whose given name is empty after cleaning.
const DefaultName = "file"

// CleanName turns a name given by a client or a tool into a safe display
// name. A relative sub-path such as "images/a.png" is kept, but each segment
// is cleaned: backslashes count as separators, empty, "." and ".." segments
// (and any made only of dots) are dropped, control and invisible formatting
// characters (NUL, newlines, bidirectional overrides) are removed, invalid
// UTF-8 becomes "_", surrounding spaces are trimmed, and a segment longer than
// MaxNameSegmentBytes is shortened keeping its extension. The result never
// starts with "/", never climbs out of its folder and is never empty
// (DefaultName stands in).
//
// Display names never name anything on disk: the store keeps files under
// random ids. Cleaning makes them safe to show, to put in headers and URLs,
// and to use as the base name of a local copy.
func CleanName(name string) string {
	name = strings.ToValidUTF8(name, "_")
	name = strings.ReplaceAll(name, `\`, "/")
	var segs []string
	for _, seg := range strings.Split(name, "/") {
		if seg = cleanSegment(seg); seg != "" {
			segs = append(segs, seg)
		}
	}
	for len(segs) > 1 && len(strings.Join(segs, "/")) > MaxNameBytes {
		segs = segs[1:]
	}
	if len(segs) == 0 {
		return DefaultName
	}
	return strings.Join(segs, "/")
}

// cleanSegment cleans one segment of a name, returning "" when nothing usable
// is left.
func cleanSegment(seg string) string {
	seg = strings.Map(func(r rune) rune {
		// Line and paragraph separators too: names end up in the lines a
		// model reads.
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return -1
		}
		return r
	}, seg)
	seg = strings.TrimSpace(seg)
	if strings.Trim(seg, ".") == "" {
		return ""
	}
	return shorten(seg, MaxNameSegmentBytes)
}

// shorten cuts seg to at most limit bytes at a rune boundary, keeping a
// reasonable extension.
func shorten(seg string, limit int) string {
	if len(seg) <= limit {
		return seg
	}
	ext := path.Ext(seg)
	if len(ext) > maxExtBytes || len(ext) == len(seg) {
		ext = ""
	}
	stem := seg[:len(seg)-len(ext)]
	cut := limit - len(ext)
	for cut > 0 && !utf8.RuneStart(stem[cut]) {
		cut--
	}
	return strings.TrimSpace(stem[:cut]) + ext
}

// baseName is the last segment of a cleaned name: what a downloaded file is
// called on the user's disk.
func baseName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// BaseName returns the last segment of CleanName(name): the name without any
// folders, as a local copy of the file is called. It returns "" when name has
// no usable segment at all (empty, only dots, only control characters), so
// the caller can fall back to a name of its own.
func BaseName(name string) string {
	name = strings.ReplaceAll(strings.ToValidUTF8(name, "_"), `\`, "/")
	segs := strings.Split(name, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if seg := cleanSegment(segs[i]); seg != "" {
			return seg
		}
	}
	return ""
}
