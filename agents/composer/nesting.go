package composer

import (
	"fmt"
	"strings"
)

// maxNesting is how many block quotes and list items may nest on one line.
const maxNesting = 32

// checkNesting refuses Markdown whose block quotes and list items nest more
// than maxNesting levels deep on one line, before it is parsed: goldmark's
// time grows with the square of that depth (16,000 levels took half a
// second, the 2 MiB allowed would take over half an hour).
func checkNesting(md string) error {
	for n := 1; md != ""; n++ {
		var line string
		line, md, _ = strings.Cut(md, "\n")
		if d := nestingDepth(line); d > maxNesting && !thematicBreak(line) {
			return fmt.Errorf("the markdown nests quotes and lists %d levels deep on line %d, more than the %d allowed: flatten it", d, n, maxNesting)
		}
	}
	return nil
}

// nestingDepth counts the quote markers (>) and list markers (-, *, + or a
// number with . or ) followed by a space) that open a line.
func nestingDepth(line string) int {
	depth := 0
	for {
		t := strings.TrimLeft(line, " \t")
		if t == "" {
			return depth
		}
		switch {
		case t[0] == '>':
			line = t[1:]
		case strings.ContainsRune("-*+", rune(t[0])) && len(t) > 1 && (t[1] == ' ' || t[1] == '\t'):
			line = t[2:]
		default:
			j := 0
			for j < len(t) && j < 9 && t[j] >= '0' && t[j] <= '9' {
				j++
			}
			if j == 0 || j+1 >= len(t) || t[j] != '.' && t[j] != ')' || t[j+1] != ' ' && t[j+1] != '\t' {
				return depth
			}
			line = t[j+2:]
		}
		depth++
	}
}

// thematicBreak reports whether line is a rule: three or more of one of
// -, * or _, and spaces.
func thematicBreak(line string) bool {
	t := strings.TrimSpace(line)
	if len(t) < 3 || !strings.ContainsRune("-*_", rune(t[0])) {
		return false
	}
	return strings.Trim(t, string(t[0])+" \t") == ""
}
