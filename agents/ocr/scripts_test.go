package ocr_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/agents/ocr"
	"github.com/agentura/agentura/agents/ocr/internal/ocrtest"
)

// Fonts the non-Latin test pages are drawn with (Debian fonts-noto-core and
// fonts-droid-fallback; .ci/apt.d/ocr.txt).
const (
	arabicFont  = "/usr/share/fonts/truetype/noto/NotoNaskhArabic-Regular.ttf"
	chineseFont = "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"
)

// arabicVisual are Arabic lines as a page shows them: shaped into
// presentation forms and in visual order (right to left, drawn left to
// right); arabicWords are words of their logical text.
var (
	arabicVisual = []string{
		"\ufee2\ufedf\ufe8e\ufecc\ufedf\ufe8e\ufe91 \ufe8e\ufe92\ufea3\ufeae\ufee3",                                             // مرحبا بالعالم
		"\ufeea\ufee0\ufedf\ufe8d \ufe94\ufee4\ufea3\ufead\ufeed \ufee2\ufedc\ufef4\ufee0\ufecb \ufee1\ufefc\ufeb4\ufedf\ufe8d", // السلام عليكم ورحمة الله
		"\ufe94\ufedf\ufeed\ufe8e\ufec4\ufedf\ufe8d \ufef0\ufee0\ufecb \ufe8f\ufe8e\ufe98\ufedc\ufedf\ufe8d",                    // الكتاب على الطاولة
	}
	arabicWords  = []string{"مرحبا", "السلام", "الكتاب"}
	chineseLines = []string{"我们今天去北京", "中华人民共和国", "这是一个测试"}
	chineseWords = []string{"北京", "中华人民共和国", "测试"}
)

// TestNonLatinScripts reads an Arabic and a Chinese page, first naming the
// language, then with languages ["auto"], which must detect the script and
// pick the installed pack.
func TestNonLatinScripts(t *testing.T) {
	svc, _ := newService(t, ocr.Config{})
	for _, tc := range []struct {
		name, lang string
		png        []byte
		words      []string
	}{
		{"arabic.png", "ara", ocrtest.PNG(t, ocrtest.RenderFont(t, ocrtest.SystemFont(t, arabicFont, "fonts-noto-core"), arabicVisual...)), arabicWords},
		{"chinese.png", "chi_sim", ocrtest.PNG(t, ocrtest.RenderFont(t, ocrtest.SystemFont(t, chineseFont, "fonts-droid-fallback"), chineseLines...)), chineseWords},
	} {
		for _, langs := range [][]string{{tc.lang}, {"auto"}} {
			res, err := invoke(t, svc, "ocr_document", map[string]any{"source": attachment(tc.name, tc.png), "languages": langs})
			if err != nil {
				t.Errorf("%s with %v: %v (install tesseract-ocr-ara, tesseract-ocr-chi-sim and tesseract-ocr-osd)", tc.name, langs, err)
				continue
			}
			if got := res.Structured()["languages"].([]string); !slices.Contains(got, tc.lang) {
				t.Errorf("%s with %v read in %v; want %s", tc.name, langs, got, tc.lang)
			}
			text := strings.ReplaceAll(res.Structured()["text"].(string), " ", "")
			for _, w := range tc.words {
				if !strings.Contains(text, strings.ReplaceAll(w, " ", "")) {
					t.Errorf("%s with %v: %q not read; text %q", tc.name, langs, w, text)
				}
			}
		}
	}
}

// TestAutoPDF: a scanned Chinese PDF with languages ["auto"]: the script is
// detected on page 1 and every page read in chi_sim.
func TestAutoPDF(t *testing.T) {
	svc, _ := newService(t, ocr.Config{})
	font := ocrtest.SystemFont(t, chineseFont, "fonts-droid-fallback")
	doc := ocrtest.PDFFont(t, font, chineseLines, []string{"北京欢迎你", "中华人民共和国"})
	res, err := invoke(t, svc, "ocr_document", map[string]any{"source": attachment("zh.pdf", doc), "languages": []string{"auto"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Structured()["languages"].([]string); !slices.Contains(got, "chi_sim") {
		t.Errorf("read in %v; want chi_sim", got)
	}
	pages := pageTexts(t, res)
	if len(pages) != 2 || !strings.Contains(strings.ReplaceAll(pages[1], " ", ""), "北京欢迎你") {
		t.Errorf("pages %q; want 2, the second with 北京欢迎你", pages)
	}
}
