package composer

import (
	"fmt"
	"strings"
	"testing"
)

// linkAttacks are runs goldmark takes time quadratic in the length of to
// parse (16,000 repeats on one line, on the 2-core machine).
var linkAttacks = map[string]string{
	"UnclosedLinks":        "[a](",   // 2.4 s
	"UnclosedImages":       "![a](",  // 2.9 s
	"UnclosedAngleTargets": "[a](<",  // 2.1 s
	"SpacedAngleTargets":   "[a](< ", // spaces do not end a <target>
}

// TestLinkScanLimit: long runs of unclosed links are refused before parsing,
// naming the line; runs of other markers, which parse in linear time, and a
// large document full of links are accepted.
func TestLinkScanLimit(t *testing.T) {
	svc := newService(t, Limits{})
	for name, s := range linkAttacks {
		md := "# Title\n\n" + strings.Repeat(s, 16000)
		_, err := invoke(t, svc, "compose_document", map[string]any{"markdown": md, "format": "html"})
		if err == nil || !strings.Contains(err.Error(), "too many unclosed links") || !strings.Contains(err.Error(), "on line 3") ||
			!strings.Contains(err.Error(), fmt.Sprint(DefaultLimits().LinkScanBytes)) {
			t.Errorf("%s: %v, want the link scan limit naming line 3", name, err)
		}
	}
	for _, s := range []string{"[a][", "[", "*a ", "_a ", "~a ", "`a ", "<a "} {
		md := strings.Repeat(s, 16000)
		if _, err := invoke(t, svc, "compose_document", map[string]any{"markdown": md, "format": "html"}); err != nil {
			t.Errorf("16000 × %q: %v", s, err)
		}
	}
}

func TestLinkTargetScan(t *testing.T) {
	for s, want := range map[string]int{
		"url) rest": 3, "url rest": 3, "<a b> x": 4, "<a b\nc>": 4, "a(b)c) x": 5, "  \n x": 5,
		`a\)b) x`: 4, `<a\>b> x`: 5, "": 0, "abc": 3,
	} {
		if got := linkTargetScan(s); got != want {
			t.Errorf("linkTargetScan(%q) = %d, want %d", s, got, want)
		}
	}
	md := "ok\n\n[x](abc\nsecond [y](de"
	if err := checkLinkScan(md, 5); err != nil {
		t.Errorf("5 bytes read, limit 5: %v", err)
	}
	if err := checkLinkScan(md, 4); err == nil || !strings.Contains(err.Error(), "on line 4") {
		t.Errorf("5 bytes read, limit 4: %v, want refused on line 4", err)
	}
}

// realisticLinks is a long document heavy in links and emphasis: 200
// sections, each a heading, a paragraph with links and emphasis, and a
// list of 20 links.
func realisticLinks() string {
	var md strings.Builder
	md.WriteString("# Link collection\n\n")
	for s := range 200 {
		fmt.Fprintf(&md, "## Section %d\n\nThis *section* lists **sources** on topic_%d, see [the index](https://example.com/index_(%d)) "+
			"and ~~old~~ [notes][ref%d] with [the figure](<https://example.com/fig %d.png> \"Figure\").\n\n[ref%d]: https://example.com/ref_%d\n\n",
			s, s, s, s, s, s, s)
		for i := range 20 {
			fmt.Fprintf(&md, "- [Paper %d_%d: *on* the_subject](https://example.com/papers/p_%d_%d?q=a_b) — _important_\n", s, i, s, i)
		}
		md.WriteString("\n")
	}
	return md.String()
}

// TestLinkScanRealistic: a large document with thousands of links is
// accepted and its links survive.
func TestLinkScanRealistic(t *testing.T) {
	md := realisticLinks()
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
	for _, want := range []string{`<a href="https://example.com/papers/p_199_19?q=a_b">Paper 199_19: </a>`,
		`<a href="https://example.com/index_(199)">`, `<a href="https://example.com/fig%20199.png"`} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("the html lacks %s", want)
		}
	}
}

// TestParagraphLinks: a paragraph of many short lines of unclosed links is
// refused, naming its first line; so are many paragraphs each near the
// limit; blank lines, of spaces too, end a paragraph.
func TestParagraphLinks(t *testing.T) {
	svc := newService(t, Limits{})
	md := "# Title\n\n" + strings.Repeat(strings.Repeat("[a](", 30)+"\n", 20)
	_, err := invoke(t, svc, "compose_document", map[string]any{"markdown": md, "format": "html"})
	if err == nil || !strings.Contains(err.Error(), "the paragraph starting on line 3 has 600 links") ||
		!strings.Contains(err.Error(), "more than the 500 allowed") || !strings.Contains(err.Error(), "split it with blank lines") {
		t.Errorf("600 links in a paragraph: %v, want the paragraph limit naming line 3", err)
	}
	for _, tc := range []struct {
		md   string
		want string
	}{
		{"a\n\n" + strings.Repeat("](", 10), ""},
		{"a\n\n" + strings.Repeat("](", 11), "starting on line 3 has 11"},
		{strings.Repeat("](", 5) + "\n  \t\n" + strings.Repeat("](", 6) + "\n" + strings.Repeat("](", 5), "starting on line 3 has 11"},
		{strings.Repeat(strings.Repeat("](", 10)+"\n\n", 16), ""},
		{strings.Repeat(strings.Repeat("](", 10)+"\n\n", 17), "the limit was reached at the paragraph starting on line 33"},
	} {
		err := checkParagraphLinks(tc.md, 10)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: %v, want %q", tc.md, err, tc.want)
		}
	}
}
