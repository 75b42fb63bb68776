package composer

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/bmp"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/internal/testkit/heappeak"
)

// newService is the agent in process, with lim, for tests that call its
// tools through agentcore (Service.Invoke) rather than over HTTP.
func newService(t *testing.T, lim Limits) *agentcore.Service {
	t.Helper()
	return newServiceAt(t, lim, "http://localhost:8002")
}

// newServiceAt is newService whose URLs start with publicURL.
func newServiceAt(t *testing.T, lim Limits, publicURL string) *agentcore.Service {
	t.Helper()
	svc, err := agentcore.New(Info, agentcore.Config{DataDir: t.TempDir(), PublicURL: publicURL},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	cfg, err := LoadConfig(os.LookupEnv) // AGENT_FONT_DIRS, as a test sets it
	if err != nil {
		t.Fatal(err)
	}
	if err := RegisterConfig(svc, cfg, lim); err != nil {
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

// TestTableCellsLimit (E13): a table is bounded by its cells, one table and
// all of a document's together, and refused with a message naming the
// limit and what to do; tables inside lists and quotes count too.
func TestTableCellsLimit(t *testing.T) {
	svc := newService(t, Limits{TableCells: 12, Cells: 20})
	table := func(cols, rows int) string { // rows below the header
		s := "|" + strings.Repeat(" h |", cols) + "\n|" + strings.Repeat("---|", cols) + "\n"
		return s + strings.Repeat("|"+strings.Repeat(" c |", cols)+"\n", rows)
	}
	for _, tc := range []struct {
		name, md, want string
	}{
		{"one table within", table(3, 3), ""},
		{"one table over", table(3, 4), "a table has 15 cells (5 rows × 3 columns, the header row included), more than the 12 allowed in one table; split the table"},
		{"two tables within", table(2, 4) + "\n" + table(2, 4), ""},
		{"three tables over", table(2, 4) + "\n" + table(2, 4) + "\n" + table(2, 1), "cells together, more than the 20 allowed in one document"},
		{"in a list", "- a\n\n  " + strings.ReplaceAll(table(3, 4), "\n", "\n  "), "a table has 15 cells"},
		{"in a quote", "> " + strings.ReplaceAll(table(3, 4), "\n", "\n> "), "a table has 15 cells"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range Formats() {
				_, err := invoke(t, svc, "compose_document", map[string]any{"markdown": tc.md, "format": format})
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("%s: %v", format, err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("%s: %v, want an error containing %q", format, err, tc.want)
				}
			}
		})
	}
}

// TestFloodsRefusedWhileParsing (E13): Markdown over the block or cell
// limits is refused as the parser passes the limit, before it has built the
// tree of the whole text (2 MiB of headings peaked at 277 MiB before they
// were refused; a 1 MB table of 480,000 cells takes about 240 MiB as a
// tree; 2 MiB of "*a* " took 755 MiB, a paragraph of a word per line 554).
func TestFloodsRefusedWhileParsing(t *testing.T) {
	lim := DefaultLimits()
	fill := func(unit string) []byte {
		return []byte(strings.Repeat(unit, lim.MarkdownBytes/len(unit)))
	}
	wide := "|" + strings.Repeat("a|", 240) + "\n|" + strings.Repeat("-|", 240) + "\n"
	for _, tc := range []struct {
		name string
		md   []byte
		want string
	}{
		{"a slide per heading", fill("# a\n\nb\n\n"), "blocks"},
		{"a list item per line", fill("- a\n"), "blocks"},
		{"a 2000 × 240 table", []byte(wide + strings.Repeat("|"+strings.Repeat("a|", 240)+"\n", 2000)), "a table has"},
		{"many small tables", fill("|a|b|\n|-|-|\n|c|d|\n\n"), "cells together"},
		{"a paragraph of a line per word", fill("a\n"), "lines and inline elements"},
		{"hard line breaks", fill("a  \n"), "lines and inline elements"},
		{"emphasis", fill("*a* "), "lines and inline elements"},
		{"strikethrough", fill("~~a~~ "), "lines and inline elements"},
		{"links", fill("<http://a> "), "lines and inline elements"},
	} {
		var err error
		peak := heappeak.Measure(func() { _, err = ParseLimited(tc.md, "", lim) })
		t.Logf("%-22s %d bytes: heap peak %d MiB", tc.name, len(tc.md), peak>>20)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal naming %q", tc.name, err, tc.want)
		}
		if peak > 100<<20 {
			t.Errorf("%s: the parse peaked at %d MiB before it was refused, want under 100", tc.name, peak>>20)
		}
	}
}

// TestPictureMemory (E13): what a call's pictures take to render (bytes,
// and pixels where they are decoded: PNG in PDF) is counted against the
// agent's PictureMemory before they are read; a call over all of it is
// refused, saying so, and other formats of the same pictures still render.
func TestPictureMemory(t *testing.T) {
	raw := textPNG(t, "P", 200, 100, color.White)
	pic := base64.StdEncoding.EncodeToString(raw)
	svc := newService(t, Limits{PictureMemory: int64(len(raw)) + 4*200*100 - 1})
	args := func(format string) map[string]any {
		return map[string]any{"markdown": "![](a.png)", "format": format, "embeds": []any{map[string]any{"name": "a.png", "content": pic}}}
	}
	_, err := invoke(t, svc, "compose_document", args("pdf"))
	if err == nil || !strings.Contains(err.Error(), "the pictures would take about") || !strings.Contains(err.Error(), "fewer pictures, or smaller ones") {
		t.Errorf("pdf: %v, want the picture memory limit", err)
	}
	for _, format := range []string{"docx", "pptx", "html", "md"} {
		if _, err := invoke(t, svc, "compose_document", args(format)); err != nil {
			t.Errorf("%s: %v", format, err)
		}
	}
}

// The memory budget counts a conversion wherever the loader makes one: an
// interlaced 8-bit PNG is converted (fpdf cannot place it), so it needs its
// decoded pixels beside its bytes, as a 16-bit one does; a plain one does not.
func TestRenderMemoryCountsInterlacedPNG(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 100, 100))); err != nil {
		t.Fatal(err)
	}
	plain := buf.Bytes()
	interlaced := bytes.Clone(plain)
	interlaced[28] = 1 // IHDR's interlace method: Adam7
	binary.BigEndian.PutUint32(interlaced[29:33], crc32.ChecksumIEEE(interlaced[12:29]))
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		conv bool
	}{{"plain.png", plain, false}, {"interlaced.png", interlaced, true}} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		got := renderMemory(p, int64(len(c.data)), "docx")
		want := int64(len(c.data))
		if c.conv {
			want += 12 * 100 * 100
		}
		if got != want {
			t.Errorf("%s: renderMemory %d, want %d (converted: %v)", c.name, got, want, c.conv)
		}
	}
}
