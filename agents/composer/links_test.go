package composer

import (
	"bytes"
	"strings"
	"testing"
)

// TestLinkTargets: link targets are resolved as a Markdown renderer would
// (character references, backslash escapes), percent-encoded so every format
// holds a valid URI, and dropped when they would run code: a browser removes
// tabs and newlines from a URL and skips leading control characters, so
// "java<TAB>script:" is javascript: to it.
func TestLinkTargets(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"[a](<java\tscript:alert(1)>)", ""},
		{"[a](java&#9;script:alert(1))", ""},
		{"[a](&#x6A;avascript:alert(1))", ""},
		{"[a](JaVaScRiPt&colon;alert(1))", ""},
		{"[a](file:///etc/passwd)", ""},
		{"[a](http://x.test/?a=1&amp;b=2)", "http://x.test/?a=1&b=2"},
		{"[a](<http://x.test/a b>)", "http://x.test/a%20b"},
		{"[a](http://x.test/caf\u00e9)", "http://x.test/caf%C3%A9"},
		{"[a](#section-2)", "#section-2"},
		{"<https://x.test/p>", "https://x.test/p"},
	} {
		d := Parse([]byte(tc.md), "")
		p, ok := d.Blocks[0].(*Paragraph)
		if !ok || len(p.Spans) == 0 {
			t.Fatalf("%q: parsed as %#v", tc.md, d.Blocks)
		}
		if got := p.Spans[0].Link; got != tc.want {
			t.Errorf("%q: link %q, want %q", tc.md, got, tc.want)
		}
		var buf bytes.Buffer
		if err := d.writeHTML(&buf); err != nil {
			t.Fatal(err)
		}
		if tc.want == "" && strings.Contains(buf.String(), "<a ") {
			t.Errorf("%q: the HTML page links it: %s", tc.md, buf.String())
		}
	}
}
