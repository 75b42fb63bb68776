package rtl

import (
	"unicode"

	"golang.org/x/text/unicode/bidi"
)

// Levels returns the bidi embedding level of each rune of a paragraph (even:
// left to right, odd: right to left): the paragraph's own level, from its
// first strong character, plus one for the runs x/text's bidi algorithm finds
// going the other way. A paragraph separator must not occur in text (use
// U+2028 for a line break).
func Levels(text []rune) []uint8 {
	levels := make([]uint8, len(text))
	base := uint8(0)
	if !LeftToRight(text) {
		base = 1
	}
	for i := range levels {
		levels[i] = base
	}
	if base == 0 && !hasRTL(text) {
		return levels
	}
	var p bidi.Paragraph
	if _, err := p.SetString(string(text)); err != nil {
		return levels
	}
	o, err := p.Order()
	if err != nil {
		return levels
	}
	for i := range o.NumRuns() {
		r := o.Run(i)
		start, end := r.Pos()
		if (r.Direction() == bidi.RightToLeft) == (base == 1) {
			continue
		}
		for j := max(start, 0); j <= end && j < len(levels); j++ {
			levels[j] = base + 1
		}
	}
	return levels
}

// LeftToRight reports whether a paragraph runs left to right: its first
// strong character (rules P2, P3) is a left-to-right one, or it has none.
func LeftToRight(text []rune) bool {
	for _, r := range text {
		props, _ := bidi.LookupRune(r)
		switch props.Class() {
		case bidi.L:
			return true
		case bidi.R, bidi.AL:
			return false
		}
	}
	return true
}

// hasRTL reports whether text has a right-to-left character.
func hasRTL(text []rune) bool {
	for _, r := range text {
		if props, _ := bidi.LookupRune(r); props.Class() == bidi.R || props.Class() == bidi.AL {
			return true
		}
	}
	return false
}

// Order returns the visual order of the items of one line, given each item's
// level in logical order: rule L2 of the bidi algorithm (from the highest
// level down to the lowest odd one, every sequence at that level or above is
// reversed).
func Order(levels []uint8) []int {
	idx := make([]int, len(levels))
	var highest, lowestOdd uint8 = 0, 255
	for i, l := range levels {
		idx[i] = i
		highest = max(highest, l)
		if l%2 == 1 {
			lowestOdd = min(lowestOdd, l)
		}
	}
	for lvl := highest; lvl >= lowestOdd && lvl > 0; lvl-- {
		for i := 0; i < len(idx); {
			if levels[idx[i]] < lvl {
				i++
				continue
			}
			j := i
			for j < len(idx) && levels[idx[j]] >= lvl {
				j++
			}
			for a, b := i, j-1; a < b; a, b = a+1, b-1 {
				idx[a], idx[b] = idx[b], idx[a]
			}
			i = j
		}
	}
	return idx
}

// Reverse returns s with its characters in reverse order, for drawing a
// right-to-left run left to right: combining marks stay after the letter
// they sit on, and paired brackets are mirrored (rule L4).
func Reverse(s string) string {
	in := []rune(s)
	out := make([]rune, 0, len(in))
	for end := len(in); end > 0; {
		start := end - 1
		for start > 0 && unicode.Is(unicode.Mn, in[start]) {
			start--
		}
		out = append(out, mirror(in[start]))
		out = append(out, in[start+1:end]...)
		end = start
	}
	return string(out)
}

// mirror is the mirrored glyph of a paired bracket.
func mirror(r rune) rune {
	const pairs = "()[]{}<>«»‹›"
	p := []rune(pairs)
	for i, c := range p {
		if c == r {
			return p[i^1]
		}
	}
	return r
}
