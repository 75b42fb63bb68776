package composer

import (
	"fmt"
	"strings"
)

// checkLinkScan refuses Markdown before it is parsed when goldmark would
// read more than limit bytes in all looking for link targets. After each
// "](" goldmark reads the target up to a space or an unbalanced ")" (or, for
// "<target>", to the ">" or the end of the line), and reads it again for the
// next "](" if the link did not close: many unclosed "[a](" on one long line
// take time quadratic in the line (16,000 took 2.4 s). This reads what
// goldmark would after every "](", an opening [ or not, and stops once
// limit is reached, so it costs at most limit steps itself.
func checkLinkScan(md string, limit int64) error {
	var read int64
	line := 1
	for i := 0; i+1 < len(md); i++ {
		if md[i] == '\n' {
			line++
			continue
		}
		if md[i] != ']' || md[i+1] != '(' {
			continue
		}
		read += int64(linkTargetScan(md[i+2:]))
		if read > limit {
			return fmt.Errorf("the markdown has too many unclosed links: after the \"](\" on line %d, finding where its links' targets end takes reading more than %d bytes: close each \"[text](target)\" with \")\", or put a space or line break between the \"](\" of a long run", line, limit)
		}
	}
	return nil
}

// paragraphBudget is how many paragraphs of a full LinksPerParagraph one
// document may hold: the squares of every paragraph's count of "](" add up
// to at most paragraphBudget × LinksPerParagraph².
const paragraphBudget = 16

// checkParagraphLinks refuses Markdown before it is parsed when a paragraph
// (the text between blank lines, whatever it holds) has more than limit
// "](", or the paragraphs' counts squared add up to more than
// paragraphBudget × limit²: goldmark's time grows with the square of their
// count in a paragraph even when each line is short.
func checkParagraphLinks(md string, limit int) error {
	budget := int64(paragraphBudget) * int64(limit) * int64(limit)
	var spent int64
	count, start := 0, 1
	end := func() error {
		if count > limit {
			return fmt.Errorf("the paragraph starting on line %d has %d links (\"](\"), more than the %d allowed in one paragraph: split it with blank lines", start, count, limit)
		}
		if spent += int64(count) * int64(count); spent > budget {
			return fmt.Errorf("the markdown has too many paragraphs with hundreds of links (\"](\"), the limit was reached at the paragraph starting on line %d: split them with blank lines, or the document into several", start)
		}
		count = 0
		return nil
	}
	for n := 1; md != ""; n++ {
		var line string
		line, md, _ = strings.Cut(md, "\n")
		if strings.TrimSpace(line) == "" {
			if err := end(); err != nil {
				return err
			}
			start = n + 1
			continue
		}
		count += strings.Count(line, "](")
	}
	return end()
}

// linkTargetScan is how many bytes of s (the text after a "](") goldmark's
// parseLinkDestination reads: spaces and line ends first, then to the ">"
// or line end of a "<target>", else to a space or an unbalanced ")".
func linkTargetScan(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	if i < len(s) && s[i] == '<' {
		for i++; i < len(s) && s[i] != '>' && s[i] != '\n'; i++ {
			if s[i] == '\\' {
				i++
			}
		}
		return i
	}
	for open := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == '(':
			open++
		case c == ')':
			if open--; open < 0 {
				return i
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			return i
		}
	}
	return i
}
