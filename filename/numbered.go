package filename

import (
	"strconv"
	"strings"
)

// Numbered returns name with " (n)" before the extension of its last
// segment: Numbered("images/chart.png", 2) is "images/chart (2).png". It is
// how a name already taken is told apart from the one that has it. n of 1
// or less returns name unchanged, so a loop may start at 1.
//
// The last segment stays within MaxSegmentBytes: if the number does not fit,
// the stem is cut at a rune boundary (an extension longer than 32 bytes is
// cut with it, as Clean does). A dotfile keeps its leading dot:
// ".env" becomes ".env (2)". name is expected to be clean (see Clean).
func Numbered(name string, n int) string {
	if n <= 1 {
		return name
	}
	dir, base := "", name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		dir, base = name[:i+1], name[i+1:]
	}
	suffix := " (" + strconv.Itoa(n) + ")"
	stem, ext := splitExt(base)
	if len(stem)+len(suffix)+len(ext) > MaxSegmentBytes && len(ext) > maxExtBytes {
		stem, ext = base, ""
	}
	return dir + cut(stem, MaxSegmentBytes-len(suffix)-len(ext)) + suffix + ext
}
