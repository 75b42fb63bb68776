package composer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"io"
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/image/bmp"

	"github.com/agentura/agentura/agentcore"
)

// newService is the agent in process, with lim, for tests that call its
// tools through agentcore (Service.Invoke) rather than over HTTP.
func newService(t *testing.T, lim Limits) *agentcore.Service {
	t.Helper()
	svc, err := agentcore.New(Info, agentcore.Config{DataDir: t.TempDir(), PublicURL: "http://localhost:8002"},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	if err := RegisterWithLimits(svc, lim); err != nil {
		t.Fatal(err)
	}
	return svc
}

func invoke(t *testing.T, svc *agentcore.Service, tool string, args map[string]any) (*agentcore.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return svc.Invoke(t.Context(), tool, agentcore.AnonymousOwner, raw)
}

func TestLimits(t *testing.T) {
	pic := base64.StdEncoding.EncodeToString(textPNG(t, "P", 60, 40, color.White))
	pdf := base64.StdEncoding.EncodeToString(testPDF(t, "page"))
	svc := newService(t, Limits{EmbedBytes: int64(len(pic)), ImagePixels: 60 * 40, Sources: 2, SourceBytes: int64(len(pdf))})
	embed := func(name string) map[string]any { return map[string]any{"name": name, "content": pic} }
	source := map[string]any{"name": "a.pdf", "content": pdf}
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"EmbedBytes", "compose_document", map[string]any{"markdown": "x", "embeds": []any{embed("a.png"), embed("b.png")}},
			"the embeds are larger than the"},
		{"DuplicateEmbed", "compose_document", map[string]any{"markdown": "x", "embeds": []any{embed("a.png"), embed("a.png")}},
			`two embeds are named "a.png"`},
		{"Sources", "merge_pdfs", map[string]any{"sources": []any{source, source, source}},
			"3 sources, more than the 2 allowed"},
		{"SourceBytes", "merge_pdfs", map[string]any{"sources": []any{source, source}},
			"the sources are larger than the"},
		{"NoSources", "merge_pdfs", map[string]any{"sources": []any{}}, "sources is empty"},
		{"EmptyMarkdown", "compose_document", map[string]any{"markdown": "  \n"}, "markdown is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := invoke(t, svc, tc.tool, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("WithinLimits", func(t *testing.T) {
		res, err := invoke(t, svc, "compose_document", map[string]any{"markdown": "![](a.png)", "format": "html", "embeds": []any{embed("a.png")}})
		if err != nil || len(res.Files) != 1 || res.Files[0].Filename != "document.html" {
			t.Fatalf("compose within the limits: %v, %+v", err, res)
		}
		res, err = invoke(t, svc, "merge_pdfs", map[string]any{"sources": []any{source}, "filename": "one"})
		if err != nil || len(res.Files) != 1 || res.Files[0].Filename != "one.pdf" || res.Data["pages"] != 1 {
			t.Fatalf("merge within the limits: %v, %+v", err, res)
		}
	})
}

// TestShownPicturesLimit: a picture shown many times is written as many
// times in docx, pptx and html (11 KB of Markdown showing one 270 KB picture
// a thousand times made a 360 MB page), so what the document shows is
// limited, each showing counted, before anything is rendered.
func TestShownPicturesLimit(t *testing.T) {
	raw := textPNG(t, "P", 60, 40, color.White)
	pic := base64.StdEncoding.EncodeToString(raw)
	svc := newService(t, Limits{ShownImageBytes: 3 * int64(len(raw))})
	embeds := []any{map[string]any{"name": "a.png", "content": pic}}
	for _, format := range Formats() {
		_, err := invoke(t, svc, "compose_document", map[string]any{"markdown": strings.Repeat("![](a.png)\n\n", 3), "format": format, "embeds": embeds})
		if err != nil {
			t.Errorf("%s, picture shown 3 times: %v", format, err)
		}
		_, err = invoke(t, svc, "compose_document", map[string]any{"markdown": strings.Repeat("![](a.png)\n\n", 4), "format": format, "embeds": embeds})
		if err == nil || !strings.Contains(err.Error(), "4 pictures shown") || !strings.Contains(err.Error(), "fewer times") {
			t.Errorf("%s, picture shown 4 times: %v, want the shown-pictures limit", format, err)
		}
	}
}

// TestConvertPixelsLimit: pictures that must be decoded and re-encoded
// (here BMP) share a pixel budget per document, checked before decoding: a
// 190 KB TIFF of 49 megapixels took 1.5 s and 700 MB of allocations to
// convert, and a call may carry a hundred of them. PNG and JPEG, which go
// into the documents as they are, do not count.
func TestConvertPixelsLimit(t *testing.T) {
	var b bytes.Buffer
	if err := bmp.Encode(&b, image.NewRGBA(image.Rect(0, 0, 60, 40))); err != nil {
		t.Fatal(err)
	}
	scan := base64.StdEncoding.EncodeToString(b.Bytes())
	photo := base64.StdEncoding.EncodeToString(textPNG(t, "P", 60, 40, color.White))
	svc := newService(t, Limits{ConvertPixels: 60 * 40 * 3 / 2})
	embed := func(name, content string) map[string]any { return map[string]any{"name": name, "content": content} }
	md := "![](a.bmp) ![](p1.png) ![](p2.png)"
	if _, err := invoke(t, svc, "compose_document", map[string]any{"markdown": md,
		"embeds": []any{embed("a.bmp", scan), embed("p1.png", photo), embed("p2.png", photo)}}); err != nil {
		t.Errorf("one BMP and two PNGs: %v", err)
	}
	_, err := invoke(t, svc, "compose_document", map[string]any{"markdown": md + " ![](b.bmp)",
		"embeds": []any{embed("a.bmp", scan), embed("p1.png", photo), embed("p2.png", photo), embed("b.bmp", scan)}})
	if err == nil || !strings.Contains(err.Error(), `embed "b.bmp"`) || !strings.Contains(err.Error(), "as 8-bit PNG or JPEG") {
		t.Errorf("two BMPs: %v, want the conversion limit naming b.bmp", err)
	}
}

// TestNestingLimit: goldmark takes time quadratic in how deeply quotes and
// lists nest (16,000 levels of "> " took 0.55 s, so the 2 MiB allowed would
// take over half an hour), so deep nesting is refused before parsing.
func TestNestingLimit(t *testing.T) {
	svc := newService(t, Limits{})
	for _, md := range []string{strings.Repeat("> ", 40) + "x", strings.Repeat("- ", 40) + "x", "text\n\n" + strings.Repeat("> 1. ", 20) + "x"} {
		_, err := invoke(t, svc, "compose_document", map[string]any{"markdown": md, "format": "html"})
		if err == nil || !strings.Contains(err.Error(), "levels deep on line") {
			t.Errorf("%.20q…: %v, want the nesting limit", md, err)
		}
	}
	for _, md := range []string{strings.Repeat("> ", 8) + "x", "- a\n  - b\n    > c", "-- not a list\n\n>>> three quotes", "* * *\n\n1. x", "text\n\n" + strings.Repeat("- ", 40)} {
		if _, err := invoke(t, svc, "compose_document", map[string]any{"markdown": md, "format": "html"}); err != nil {
			t.Errorf("%q: %v", md, err)
		}
	}
}
