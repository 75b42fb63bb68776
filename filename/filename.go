// Package filename holds the rules for display names of files: how a name
// given by a client, a tool or a model is cleaned (Clean, Base), how long it
// may be, and how a taken name is numbered ("report (2).pdf", Numbered).
// Agents, the file service and clients all name files by these rules, so it
// imports only the standard library and any of them may import it.
package filename

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a display name after Clean.
const (
	// MaxSegmentBytes is the longest segment (file or folder name) kept,
	// the limit of common file systems.
	MaxSegmentBytes = 255
	// MaxBytes is the longest whole name kept; leading folders are
	// dropped to fit.
	MaxBytes = 1024
	// maxExtBytes is the longest extension kept when a segment is shortened.
	maxExtBytes = 32
)

// Default is the name of a file whose given name is empty after cleaning.
const Default = "file"

// Clean turns a name given by a client or a tool into a safe display
// name. A relative sub-path such as "images/a.png" is kept, but each segment
// is cleaned: backslashes count as separators, empty, "." and ".." segments
// (and any made only of dots) are dropped, control and invisible formatting
// characters (NUL, newlines, bidirectional overrides) are removed, invalid
// UTF-8 becomes "_", surrounding spaces are trimmed, and a segment longer than
// MaxSegmentBytes is shortened keeping its extension. The result never
// starts with "/", never climbs out of its folder and is never empty
// (Default stands in).
//
// Display names never name anything on disk: the store keeps files under
// random ids. Cleaning makes them safe to show, to put in headers and URLs,
// and to use as the base name of a local copy.
func Clean(name string) string {
	name = strings.ToValidUTF8(name, "_")
	name = strings.ReplaceAll(name, `\`, "/")
	var segs []string
	for _, seg := range strings.Split(name, "/") {
		if seg = cleanSegment(seg); seg != "" {
			segs = append(segs, seg)
		}
	}
	for len(segs) > 1 && len(strings.Join(segs, "/")) > MaxBytes {
		segs = segs[1:]
	}
	if len(segs) == 0 {
		return Default
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
	// Checked after shortening too: cutting a long segment may leave only
	// its dots ("....… 0." cut to its first bytes), which is no name.
	if seg = shorten(strings.TrimSpace(seg), MaxSegmentBytes); strings.Trim(seg, ".") == "" {
		return ""
	}
	return seg
}

// Shorten cuts a segment to at most limit bytes at a rune boundary, keeping
// its extension (when one of at most 32 bytes): room for what a tool adds to
// a name ("out-" before it, ".zip" after it) within MaxSegmentBytes.
func Shorten(seg string, limit int) string { return shorten(seg, limit) }

// shorten cuts seg to at most limit bytes at a rune boundary, keeping a
// reasonable extension.
func shorten(seg string, limit int) string {
	if len(seg) <= limit {
		return seg
	}
	stem, ext := splitExt(seg)
	if len(ext) > maxExtBytes {
		stem, ext = seg, ""
	}
	return cut(stem, limit-len(ext)) + ext
}

// splitExt splits a segment into stem and extension. The dot that starts a
// dotfile (".env") starts its name, not an extension.
func splitExt(seg string) (stem, ext string) {
	ext = path.Ext(seg)
	if len(ext) == len(seg) {
		ext = ""
	}
	return seg[:len(seg)-len(ext)], ext
}

// cut returns s cut to at most limit bytes at a rune boundary, without
// trailing spaces.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	limit = max(limit, 0)
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return strings.TrimRightFunc(s[:limit], unicode.IsSpace)
}

// Base returns the last segment of Clean(name): the name without any
// folders, as a local copy of the file is called. It returns "" when name has
// no usable segment at all (empty, only dots, only control characters), so
// the caller can fall back to a name of its own.
func Base(name string) string {
	name = strings.ReplaceAll(strings.ToValidUTF8(name, "_"), `\`, "/")
	segs := strings.Split(name, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if seg := cleanSegment(segs[i]); seg != "" {
			return seg
		}
	}
	return ""
}
