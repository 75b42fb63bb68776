package composer

import (
	"fmt"
	"strings"
	"testing"
)

// markerAttacks are paragraphs goldmark takes time quadratic in the size of
// to parse (measured at 16,000 repeats on the 2-core machine).
var markerAttacks = map[string]string{
	"UnclosedLinks":  "[a](",  // 2.7 s
	"UnclosedImages": "![a](", // 3.1 s
	"UnclosedTitles": `[a](b "`,
	"UnclosedRefs":   "[a][", // 1.1 s
	"Brackets":       "[",    // 0.13 s
	"Stars":          "*a ",  // 0.3 s
	"Underscores":    "_a ",
	"Tildes":         "~a ",
}

// markersIn counts the link brackets and emphasis markers of s.
func markersIn(s string) int {
	n := 0
	for _, c := range inlineMarkers {
		n += strings.Count(s, string(c))
	}
	return n
}

// TestMarkerLimit: a paragraph with thousands of link brackets or emphasis
// markers is refused before parsing, naming its line; so are many
// paragraphs each just under the limit, which would add up.
func TestMarkerLimit(t *testing.T) {
	svc := newService(t, Limits{})
	for name, s := range markerAttacks {
		md := "# Title\n\nIntro.\n\n" + strings.Repeat(s, 16000)
		_, err := invoke(t, svc, "compose_document", map[string]any{"markdown": md, "format": "html"})
		want := fmt.Sprintf("the paragraph starting on line 5 holds %d link brackets", 16000*markersIn(s))
		if err == nil || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "more than the 1000 allowed") || !strings.Contains(err.Error(), "split it with blank lines") {
			t.Errorf("%s: %v, want the marker limit naming line 5", name, err)
		}
	}
	many := strings.Repeat(strings.Repeat("[a](", 900)+"\n\n", 100)
	_, err := invoke(t, svc, "compose_document", map[string]any{"markdown": many, "format": "html"})
	if err == nil || !strings.Contains(err.Error(), "too many link brackets and emphasis markers") ||
		!strings.Contains(err.Error(), "starting on line 159") {
		t.Errorf("100 paragraphs of 900 unclosed links: %v, want the document's marker budget reached on line 159", err)
	}
}

// TestMarkerLimitLines: the limit counts per paragraph (text between blank
// lines, blank lines of spaces too), and names the paragraph's first line.
func TestMarkerLimitLines(t *testing.T) {
	for _, tc := range []struct {
		md   string
		want string
	}{
		{"a\n\n" + strings.Repeat("*", 10), ""},
		{"a\n\n" + strings.Repeat("*", 11), "starting on line 3 holds 11"},
		{strings.Repeat("[", 5) + "\n  \t\n" + strings.Repeat("_", 6) + "\n" + strings.Repeat("~", 5), "starting on line 3 holds 11"},
		{"x\n" + strings.Repeat("[", 11), "starting on line 1 holds 11"},
		{strings.Repeat("[\n\n", 20), ""},
	} {
		err := checkMarkers(tc.md, 10)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: %v, want %q", tc.md, err, tc.want)
		}
	}
}

// realisticLinks is a long document heavy in links and emphasis: 200
// sections, each a heading, a paragraph with links and emphasis, and a
// list of 20 links, about 700 KiB.
func realisticLinks() string {
	var md strings.Builder
	md.WriteString("# Link collection\n\n")
	for s := range 200 {
		fmt.Fprintf(&md, "## Section %d\n\nThis *section* lists **sources** on topic_%d, see [the index](https://example.com/index_%d) "+
			"and ~~old~~ [notes][ref%d] and [the figure](https://example.com/fig_%d.png).\n\n[ref%d]: https://example.com/ref_%d\n\n",
			s, s, s, s, s, s, s)
		for i := range 20 {
			fmt.Fprintf(&md, "- [Paper %d_%d: *on* the_subject](https://example.com/papers/p_%d_%d?q=a_b) — _important_\n", s, i, s, i)
		}
		md.WriteString("\n")
	}
	return md.String()
}

// TestMarkerLimitRealistic: a large document with thousands of links and
// emphasis in all is accepted and its links survive.
func TestMarkerLimitRealistic(t *testing.T) {
	md := realisticLinks()
	if err := checkMarkers(md, DefaultLimits().InlineMarkers); err != nil {
		t.Fatalf("a realistic document of %d bytes: %v", len(md), err)
	}
	svc := newService(t, Limits{})
	res, err := invoke(t, svc, "compose_document", map[string]any{"markdown": md, "format": "html"})
	if err != nil {
		t.Fatalf("a realistic document of %d bytes: %v", len(md), err)
	}
	if !strings.Contains(res.Text, "Composed link-collection.html") {
		t.Errorf("result %q", res.Text)
	}
	var html strings.Builder
	if err := Parse([]byte(md), "").Write(&html, "html"); err != nil {
		t.Fatal(err)
	}
	// A link is one <a> per differently styled run of its text.
	if n := strings.Count(html.String(), `<em>on</em></a><a href="https://example.com/papers/p_`); n != 200*20 {
		t.Errorf("the html links %d papers with emphasis in the link text, want %d", n, 200*20)
	}
	if !strings.Contains(html.String(), `<a href="https://example.com/papers/p_199_19?q=a_b">Paper 199_19: </a>`) {
		t.Error("the html lacks the last paper's link")
	}
}
