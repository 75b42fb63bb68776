package composer

import (
	"fmt"
	"strings"
)

// inlineMarkers are the characters whose count in one paragraph makes
// goldmark's inline parsing slow: each [ may open a link or image whose
// destination is searched for to the end of the paragraph, and each *, _ or
// ~ may open emphasis whose closer is searched for among the delimiters
// still open. Time grows with the square of their count in one paragraph
// (16,000 unclosed "[a](" took 2.4 s).
const inlineMarkers = "[*_~"

// markerBudgetBlocks is how many paragraphs of a full InlineMarkers count
// one document may hold: the sum of the squares of every paragraph's count
// is bounded by it times InlineMarkers², so that many paragraphs just under
// the limit cannot add up to minutes of parsing either.
const markerBudgetBlocks = 64

// checkMarkers refuses Markdown before it is parsed when a paragraph (the
// text between blank lines, whatever it holds) has more than limit link
// brackets and emphasis markers, or when the paragraphs together hold more
// than goldmark parses in well under a second.
func checkMarkers(md string, limit int) error {
	budget := int64(markerBudgetBlocks) * int64(limit) * int64(limit)
	var spent int64
	count, start := 0, 1
	end := func() error {
		if count > limit {
			return fmt.Errorf("the paragraph starting on line %d holds %d link brackets and emphasis markers ([, *, _, ~), more than the %d allowed in one paragraph: split it with blank lines", start, count, limit)
		}
		spent += int64(count) * int64(count)
		if spent > budget {
			return fmt.Errorf("the markdown holds too many link brackets and emphasis markers ([, *, _, ~) in long paragraphs (the limit was reached at the paragraph starting on line %d): split its long paragraphs with blank lines, or the document into several", start)
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
		for i := 0; i < len(line); i++ {
			if strings.IndexByte(inlineMarkers, line[i]) >= 0 {
				count++
			}
		}
	}
	return end()
}
