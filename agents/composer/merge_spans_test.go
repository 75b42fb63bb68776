package composer

import (
	"fmt"
	"strings"
	"testing"
)

// TestMergeSpansLongParagraph: the lines of a long paragraph become one span
// of their text joined by spaces; runs of other styles stay apart.
func TestMergeSpansLongParagraph(t *testing.T) {
	doc := Parse([]byte(strings.Repeat("word\n", 5000)+"**bold** *it*\n"), "")
	p, ok := doc.Blocks[0].(*Paragraph)
	if !ok || len(doc.Blocks) != 1 {
		t.Fatalf("blocks %#v, want one paragraph", doc.Blocks)
	}
	want := []Span{{Text: strings.Repeat("word ", 5000)}, {Text: "bold", Bold: true}, {Text: " "}, {Text: "it", Italic: true}}
	if len(p.Spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(p.Spans), len(want))
	}
	for i := range want {
		if p.Spans[i] != want[i] {
			t.Errorf("span %d = %.40q…, want %.40q…", i, p.Spans[i].Text, want[i].Text)
		}
	}
}

// BenchmarkParseLongParagraph parses one paragraph of n one-letter lines:
// linear in n since mergeSpans joins a run once (it was quadratic: 100,000
// lines took 9.6 s, 2 MiB of them would have taken over ten minutes).
func BenchmarkParseLongParagraph(b *testing.B) {
	for _, n := range []int{25_000, 100_000, 400_000} {
		md := []byte(strings.Repeat("x\n", n))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(md)))
			for b.Loop() {
				Parse(md, "")
			}
		})
	}
}
