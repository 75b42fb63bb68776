package composer

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseUnclosedLinks is the attack the link scan limit refuses:
// one line of n unclosed "[a](". Goldmark's time grows with n².
func BenchmarkParseUnclosedLinks(b *testing.B) {
	for _, n := range []int{2000, 4000, 8000, 16000} {
		md := []byte(strings.Repeat("[a](", n))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(md)))
			for b.Loop() {
				Parse(md, "")
			}
		})
	}
}

// worstAccepted is size bytes of Markdown of runs of shape as slow to parse
// as the default limits let them be. atLimit: paragraphs of
// LinksPerParagraph links, in lines of 32 repeats, as many as the budget
// allows, then ordinary lines. Otherwise paragraphs of one line, each of
// the most repeats that spend the budget over the whole size.
func worstAccepted(shape string, size int, atLimit bool) string {
	limit := DefaultLimits().LinksPerParagraph
	var md strings.Builder
	if atLimit {
		para := strings.Repeat(strings.Repeat(shape, 32)+"\n", limit/32) + strings.Repeat(shape, limit%32) + "\n\n"
		for range paragraphBudget {
			md.WriteString(para)
		}
	} else {
		k := paragraphBudget * limit * limit * len(shape) / size
		para := strings.Repeat(shape, k) + "\n\n"
		for md.Len()+len(para) <= size {
			md.WriteString(para)
		}
	}
	for md.Len() < size {
		md.WriteString(strings.Repeat("y ", min(40, (size-md.Len())/2)) + "\n")
	}
	return md.String()[:size]
}

// BenchmarkParseWorstAccepted parses the slowest runs of unclosed links the
// default limits accept, at two sizes, beside an ordinary document of
// links and emphasis: the extra time is bounded by LinkScanBytes, whatever
// the size.
func BenchmarkParseWorstAccepted(b *testing.B) {
	for _, shape := range []string{"UnclosedLinks", "UnclosedAngleTargets"} {
		for _, size := range []int{512 << 10, 2 << 20} {
			for _, atLimit := range []bool{true, false} {
				md := worstAccepted(linkAttacks[shape], size, atLimit)
				b.Run(fmt.Sprintf("%s/atLimit=%v/%dKiB", shape, atLimit, size>>10), func(b *testing.B) {
					b.SetBytes(int64(len(md)))
					for b.Loop() {
						Parse([]byte(md), "")
					}
				})
			}
		}
	}
	ordinary := strings.Repeat(realisticLinks(), 3)
	b.Run(fmt.Sprintf("Ordinary/%dKiB", len(ordinary)>>10), func(b *testing.B) {
		b.SetBytes(int64(len(ordinary)))
		for b.Loop() {
			Parse([]byte(ordinary), "")
		}
	})
}

// TestWorstAccepted keeps BenchmarkParseWorstAccepted honest: its inputs
// are accepted, and one more link in them is refused.
func TestWorstAccepted(t *testing.T) {
	lim := DefaultLimits()
	for name, shape := range linkAttacks {
		for _, atLimit := range []bool{true, false} {
			md := worstAccepted(shape, 2<<20, atLimit)
			if len(md) != 2<<20 {
				t.Errorf("%s atLimit=%v: %d bytes, want 2 MiB", name, atLimit, len(md))
			}
			if err := checkLinkScan(md, lim.LinkScanBytes); err != nil {
				t.Errorf("%s atLimit=%v: %v", name, atLimit, err)
			}
			if err := checkParagraphLinks(md, lim.LinksPerParagraph); err != nil {
				t.Errorf("%s atLimit=%v: %v", name, atLimit, err)
			}
			if atLimit && checkParagraphLinks(shape+md, lim.LinksPerParagraph) == nil {
				t.Errorf("%s atLimit=%v: one link more was accepted", name, atLimit)
			}
		}
	}
}
