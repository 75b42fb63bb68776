package filename

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNumbered(t *testing.T) {
	long := strings.Repeat("a", 255-len(".pdf")) + ".pdf" // a full segment
	umlauts := strings.Repeat("ü", 125) + ".txt"          // 254 bytes
	longExt := "a." + strings.Repeat("x", 253)            // the extension is too long to keep
	for _, tc := range []struct {
		name string
		n    int
		want string
	}{
		{"report.pdf", 1, "report.pdf"},
		{"report.pdf", 0, "report.pdf"},
		{"report.pdf", 2, "report (2).pdf"},
		{"report.pdf", 10, "report (10).pdf"},
		{"archive.tar.gz", 3, "archive.tar (3).gz"},
		{"README", 2, "README (2)"},
		{".env", 2, ".env (2)"},
		{".env.local", 2, ".env (2).local"},
		{"images/chart.png", 2, "images/chart (2).png"},
		{"v1.2/notes", 2, "v1.2/notes (2)"},
		{"Bericht_ü.pdf", 2, "Bericht_ü (2).pdf"},
		{long, 2, strings.Repeat("a", 255-len(".pdf")-len(" (2)")) + " (2).pdf"},
		{"dir/" + long, 12, "dir/" + strings.Repeat("a", 255-len(".pdf")-len(" (12)")) + " (12).pdf"},
		// 255 - 4 - 4 = 247 bytes of stem: 123 "ü" (246 bytes), never half a rune.
		{umlauts, 2, strings.Repeat("ü", 123) + " (2).txt"},
		{longExt, 2, longExt[:255-len(" (2)")] + " (2)"},
		{strings.Repeat("a", 246) + " bc.txt", 2, strings.Repeat("a", 246) + " (2).txt"}, // cut at the space: not two before the number
	} {
		got := Numbered(tc.name, tc.n)
		if got != tc.want {
			t.Errorf("Numbered(%q, %d) = %q, want %q", tc.name, tc.n, got, tc.want)
		}
		last := got[strings.LastIndexByte(got, '/')+1:]
		if len(last) > MaxSegmentBytes || !utf8.ValidString(got) {
			t.Errorf("Numbered(%q, %d): last segment of %d bytes, valid UTF-8 %v", tc.name, tc.n, len(last), utf8.ValidString(got))
		}
	}
}

func TestNumberedDistinct(t *testing.T) {
	// Cut names stay distinct: a loop looking for a free name ends.
	for _, name := range []string{strings.Repeat("ü", 127) + ".txt", strings.Repeat("x", 255), "a"} {
		seen := map[string]bool{name: true}
		for n := 2; n < 2000; n++ {
			got := Numbered(name, n)
			if seen[got] {
				t.Fatalf("Numbered(%q, %d) = %q, given before", name, n, got)
			}
			if Clean(got) != got {
				t.Fatalf("Numbered(%q, %d) = %q is not clean: %q", name, n, got, Clean(got))
			}
			seen[got] = true
		}
	}
}
