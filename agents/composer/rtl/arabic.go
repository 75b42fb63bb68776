// Package rtl prepares right-to-left text for a PDF writer that draws
// Unicode text through a font's cmap and nothing more (go-pdf/fpdf applies no
// OpenType GSUB or GPOS): Arabic letters are shaped into their contextual
// forms (the Arabic Presentation Forms, which fonts such as DejaVu Sans map
// in their cmap), and runs of text are put in visual order by the Unicode
// bidirectional algorithm (golang.org/x/text/unicode/bidi).
package rtl

import (
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// forms are a letter's contextual forms; a zero entry is a form the letter
// does not have.
type forms struct{ isolated, final, initial, medial rune }

// joins reports whether the letter joins the letter after it (it has an
// initial form): dual-joining letters do, right-joining ones (alef, dal,
// reh, waw...) do not.
func (f forms) joins() bool { return f.initial != 0 }

// presentation maps an Arabic letter to its presentation forms, and lamAlef
// maps an alef (after lam) to the lam-alef ligature's isolated and final
// forms. Both are read from Unicode's compatibility decompositions of the
// Presentation Forms blocks (x/text's norm tables), where each letter's forms
// follow one another as isolated, final, initial, medial: a letter with two
// forms joins on its right side only, one with four on both.
var presentation, lamAlef = buildForms()

func buildForms() (map[rune]forms, map[rune][2]rune) {
	single := map[rune]forms{}
	ligs := map[rune][2]rune{}
	var run []rune // consecutive forms of one letter
	var base rune
	flush := func() {
		switch len(run) {
		case 1:
			single[base] = forms{isolated: run[0]}
		case 2:
			single[base] = forms{isolated: run[0], final: run[1]}
		case 4:
			single[base] = forms{isolated: run[0], final: run[1], initial: run[2], medial: run[3]}
		}
		run = run[:0]
	}
	for _, block := range [][2]rune{{0xFE80, 0xFEFC}, {0xFB50, 0xFBFF}} {
		for pf := block[0]; pf <= block[1]; pf++ {
			d := []rune(norm.NFKD.String(string(pf)))
			if len(d) == 2 && d[0] == 0x0644 { // lam + alef: the ligature, isolated then final
				l := ligs[d[1]]
				if l[0] == 0 {
					l[0] = pf
				} else {
					l[1] = pf
				}
				ligs[d[1]] = l
				continue
			}
			if len(d) != 1 || d[0] == pf || !unicode.Is(unicode.Arabic, d[0]) {
				flush()
				continue
			}
			if len(run) > 0 && d[0] != base || len(run) == 4 {
				flush()
			}
			if _, done := single[d[0]]; done && len(run) == 0 {
				continue // the basic block (FE80-FEFC) wins over Forms-A
			}
			base = d[0]
			run = append(run, pf)
		}
		flush()
	}
	return single, ligs
}

// transparent reports whether r is skipped when deciding joins: combining
// marks (harakat) sit on a letter without breaking its joins.
func transparent(r rune) bool { return unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) }

// joinCausing reports whether r joins on both sides without changing form:
// tatweel and the zero-width joiner.
func joinCausing(r rune) bool { return r == 0x0640 || r == 0x200D }

// Shape replaces the Arabic letters of s, in logical order, by their
// contextual presentation forms, and lam followed by alef by the lam-alef
// ligature, which Arabic requires. Other text is returned unchanged. Letters
// without presentation forms (those of rarer languages) stay as they are.
func Shape(s string) string {
	in := []rune(s)
	hasArabic := false
	for _, r := range in {
		if _, ok := presentation[r]; ok {
			hasArabic = true
			break
		}
	}
	if !hasArabic {
		return s
	}
	// joinsRight[i]: the letter at i connects to what comes before it.
	prevJoins := func(i int) bool { // does the nearest non-transparent rune before i join forward?
		for j := i - 1; j >= 0; j-- {
			if transparent(in[j]) {
				continue
			}
			if joinCausing(in[j]) {
				return true
			}
			f, ok := presentation[in[j]]
			return ok && f.joins()
		}
		return false
	}
	nextJoins := func(i int) bool { // does the nearest non-transparent rune after i accept a join?
		for j := i + 1; j < len(in); j++ {
			if transparent(in[j]) {
				continue
			}
			if joinCausing(in[j]) {
				return true
			}
			f, ok := presentation[in[j]]
			return ok && f.final != 0
		}
		return false
	}
	out := make([]rune, 0, len(in))
	for i := 0; i < len(in); i++ {
		r := in[i]
		f, ok := presentation[r]
		if !ok {
			out = append(out, r)
			continue
		}
		before := prevJoins(i)
		if r == 0x0644 { // lam: with an alef after it, the ligature
			next := i + 1
			for next < len(in) && transparent(in[next]) {
				next++
			}
			if next < len(in) {
				if lig, ok := lamAlef[in[next]]; ok && lig[0] != 0 {
					form := lig[0]
					if before && lig[1] != 0 {
						form = lig[1]
					}
					out = append(out, form)
					out = append(out, in[i+1:next]...) // marks on the lam
					i = next
					continue
				}
			}
		}
		after := f.joins() && nextJoins(i)
		form := f.isolated
		switch {
		case before && after && f.medial != 0:
			form = f.medial
		case before && f.final != 0:
			form = f.final
		case after && f.initial != 0:
			form = f.initial
		}
		out = append(out, form)
	}
	return string(out)
}
