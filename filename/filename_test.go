package filename

import (
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, tc := range []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"images/diagram_002.png", "images/diagram_002.png"},
		{"Bericht_ü.pdf", "Bericht_ü.pdf"},
		{"line\u2028break\u2029.txt", "linebreak.txt"},
		{"../../etc/passwd", "etc/passwd"},
		{"/etc/passwd", "etc/passwd"},
		{"a/./b//c", "a/b/c"},
		{"a/../b", "a/b"},
		{`..\..\windows\system32\x.dll`, "windows/system32/x.dll"},
		{`C:\Users\me\report.pdf`, "C:/Users/me/report.pdf"},
		{"...", Default},
		{"..", Default},
		{".", Default},
		{"", Default},
		{"/", Default},
		{"a\x00b.txt", "ab.txt"},
		{"line\nbreak\r.txt", "linebreak.txt"},
		{"evil\u202Efdp.exe", "evilfdp.exe"},
		{"tab\there.txt", "tabhere.txt"},
		{"\x7fdel.txt", "del.txt"},
		{"bad\xffutf8.txt", "bad_utf8.txt"},
		{"  spaced name.txt  ", "spaced name.txt"},
		{".hidden", ".hidden"},
		{"dir/ /x", "dir/x"},
		{long + ".pdf", long[:251] + ".pdf"},
		{strings.Repeat("ü", 200) + ".txt", strings.Repeat("ü", 125) + ".txt"}, // 250 + 4 bytes, cut at a rune boundary
		{long, long[:255]},
	} {
		got := Clean(tc.in)
		if got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, seg := range strings.Split(got, "/") {
			if len(seg) > MaxSegmentBytes || seg == "" || seg == "." || seg == ".." {
				t.Errorf("Clean(%q) has segment %q", tc.in, seg)
			}
		}
	}
	deep := strings.Repeat(strings.Repeat("d", 200)+"/", 10) + "leaf.txt"
	if got := Clean(deep); len(got) > MaxBytes || !strings.HasSuffix(got, "/leaf.txt") {
		t.Errorf("deep name: %d bytes, %q", len(got), got[max(0, len(got)-20):])
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"a/b.txt", "../x", `..\..\x`, "\x00", "ü/../..", strings.Repeat("x/", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := Clean(in)
		if got == "" || strings.HasPrefix(got, "/") || strings.Contains(got, `\`) || len(got) > MaxBytes+MaxSegmentBytes {
			t.Fatalf("Clean(%q) = %q", in, got)
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == "" || strings.Trim(seg, ".") == "" || len(seg) > MaxSegmentBytes {
				t.Fatalf("Clean(%q) = %q: bad segment %q", in, got, seg)
			}
			for _, r := range seg {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("Clean(%q) = %q: control character", in, got)
				}
			}
		}
		if Clean(got) != got {
			t.Fatalf("Clean is not idempotent on %q: %q", got, Clean(got))
		}
		num := Numbered(got, 12)
		if last := num[strings.LastIndexByte(num, '/')+1:]; len(last) > MaxSegmentBytes || Base(last) != last || !strings.Contains(last, " (12)") {
			t.Fatalf("Numbered(%q, 12) = %q", got, num)
		}
	})
}

func TestBase(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":             "report.pdf",
		"images/chart.png":       "chart.png",
		`C:\Users\me\report.pdf`: "report.pdf",
		"dir/../":                "dir",
		"a/\x00\n":               "a",
		"evil\u202Efdp.exe":      "evilfdp.exe",
		"../..":                  "",
		"":                       "",
		"\x00":                   "",
		strings.Repeat("a", 300): strings.Repeat("a", 255),
	} {
		if got := Base(in); got != want {
			t.Errorf("Base(%q) = %q, want %q", in, got, want)
		}
	}
}
