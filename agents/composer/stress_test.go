package composer

import (
	"bytes"
	"strings"
	"testing"
)

// stressMarkdown is Markdown that is awkward to lay out: scripts the fonts
// lack, a word wider than the page, a wide table, deep nesting, pictures in
// odd places, hostile links and control characters.
var stressMarkdown = []string{
	"中文 日本語 한국어 emoji 😀🚀 and a zero-width\u200bjoiner",
	strings.Repeat("x", 500) + " " + "https://example.com/" + strings.Repeat("a/", 100),
	"| " + strings.Repeat("col | ", 12) + "\n|" + strings.Repeat("---|", 12) + "\n| " + strings.Repeat(strings.Repeat("w", 30)+" | ", 12),
	"- a\n  - b\n    - c\n      - d\n        - e\n          - f\n            - g\n              - h\n                - i\n                  - j",
	"-\n- \n1.\n\n#\n\n######## not a heading",
	"# H1\n## H2\n### H3\n#### H4\n##### H5\n###### H6",
	"- item ![in list](p.png)\n\n| a |\n|---|\n| ![in cell](p.png) |\n\n# heading ![in heading](p.png)",
	"[js](javascript:alert(1)) [data](data:text/html,x) <script>alert(1)</script> \x00\x01\x07 bell",
	"> > > nested quote\n> - list in quote\n> ```\n> code in quote\n> ```",
	"```\n" + strings.Repeat("a very long line of code without any breaks ", 20) + "\n\t\ttabs\n```",
	"---\n---\n---",
	strings.Repeat("word ", 3000),
	"",
}

// TestStress renders each awkward input in every format.
func TestStress(t *testing.T) {
	images := map[string]*Image{"p.png": testImage(t, t.TempDir(), "p.png", "P", 30, 20)}
	for i, md := range stressMarkdown {
		doc := Parse([]byte(md), "Stress")
		if err := doc.bind(images); err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		for _, format := range Formats() {
			var buf bytes.Buffer
			if err := doc.Write(&buf, format); err != nil {
				t.Errorf("input %d, %s: %v", i, format, err)
			}
			if format == "html" && (strings.Contains(buf.String(), "<script>") || strings.Contains(buf.String(), `href="javascript:`)) {
				t.Errorf("input %d: HTML output carries a script", i)
			}
		}
	}
}

// FuzzRender checks that no Markdown makes a renderer fail or panic. Its
// seeds (the stress inputs) run in every go test.
func FuzzRender(f *testing.F) {
	for _, md := range stressMarkdown {
		f.Add(md)
	}
	f.Fuzz(func(t *testing.T, md string) {
		doc := Parse([]byte(md), "")
		for _, fig := range figures(doc.Blocks) {
			fig.Image = &Image{Name: fig.Ref, FileName: "x.png", Format: "png", MIMEType: "image/png", Width: 1, Height: 1, Data: onePixelPNG}
		}
		for _, format := range []string{"pdf", "pptx", "html", "md"} {
			if err := doc.Write(&bytes.Buffer{}, format); err != nil {
				t.Errorf("%s: %v", format, err)
			}
		}
	})
}

// onePixelPNG is a 1×1 PNG.
var onePixelPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x00\x00\x00\x00:~\x9bU\x00\x00\x00\nIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
