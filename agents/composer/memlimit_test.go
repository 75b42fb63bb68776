package composer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"github.com/agentura/agentura/internal/requiretool"
	"image"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/attackdata"
	"github.com/agentura/agentura/internal/mcptest"
	"github.com/agentura/agentura/internal/memcg"
)

// composeMemoryLimit is the memory the compose file gives the composer
// (deploy/docker-compose.yml: COMPOSER_MEM_LIMIT, 512m).
const composeMemoryLimit = 512 << 20

// E4, E6: the worst documents the default limits allow, rendered by the
// built agent in a memory cgroup of 512 MiB (the compose file's limit): each
// is rendered or refused with a message naming its limit, and the agent is
// never OOM-killed. Needs root (a writable memory cgroup); skips otherwise,
// unless AGENTURA_REQUIRE_TOOLS=1.
func TestWorstInputsFitTheContainerMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("renders several worst-case documents (about a minute)")
	}
	g, err := memcg.New(fmt.Sprintf("agentura-composer-%d", os.Getpid()), composeMemoryLimit)
	if err != nil {
		requiretool.Missing(t, fmt.Sprintf("needs a writable memory cgroup (run as root with cgroup v1 or v2): %v", err))
	}
	t.Cleanup(func() { g.Close() })
	// The agent starts inside the group, as in a container: a shell joins
	// it and execs the agent (same process), which sees the limit at start.
	a := mcptest.NewAgent(t, composerBinary(t))
	a.Cmd.Args = []string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$1"`, g.Dir, a.Cmd.Path}
	a.Cmd.Path = "/bin/sh"
	a.Start(t)
	a.WaitReady(t)
	if !strings.Contains(a.Logs(), "gomemlimit") {
		t.Errorf("the agent did not fit its heap to the cgroup's limit:\n%s", a.Logs())
	}
	c, _ := mcptest.Connect(t, a.URL+"/mcp")

	lim := DefaultLimits()
	side := 1
	for int64(side+1)*int64(side+1) <= lim.ImagePixels {
		side++
	}
	big := image.NewNRGBA(image.Rect(0, 0, side, side))
	for i := 3; i < len(big.Pix); i += 4 {
		big.Pix[i] = 0x80 // translucent: fpdf splits colour and alpha
	}
	var bigPNG bytes.Buffer
	(&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&bigPNG, big)
	big = nil
	// A picture to convert (16-bit here) may have half the pixels.
	deepSide := 1
	for int64(deepSide+1)*int64(deepSide+1) <= lim.ImagePixels/2 {
		deepSide++
	}
	deep := image.NewRGBA64(image.Rect(0, 0, deepSide, deepSide))
	for i := range deep.Pix {
		deep.Pix[i] = byte(i)
	}
	var deepPNG bytes.Buffer
	(&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&deepPNG, deep)
	deep = nil
	deepURI := "data:image/png;base64," + base64.StdEncoding.EncodeToString(deepPNG.Bytes())
	bigURI := "data:image/png;base64," + base64.StdEncoding.EncodeToString(bigPNG.Bytes())
	bombURI := "data:image/png;base64," + base64.StdEncoding.EncodeToString(attackdata.PNGBomb(16, 16, 1<<30))

	fill := func(unit string) string {
		return strings.Repeat(unit, lim.MarkdownBytes/len(unit))
	}
	breaks := strings.Repeat("a\n\n---\n\n", lim.Pages-1)
	breaks += fill("x ")[:lim.MarkdownBytes-len(breaks)-1]
	cases := []struct {
		name      string
		args      map[string]any
		refusedBy string // "" when the document must render
	}{
		{"page breaks to the limit, pdf", map[string]any{"markdown": breaks, "format": "pdf"}, ""},
		{"page breaks to the limit, docx", map[string]any{"markdown": breaks, "format": "docx"}, ""},
		{"page breaks to the limit, pptx", map[string]any{"markdown": breaks, "format": "pptx"}, ""},
		{"page breaks past the limit, pdf", map[string]any{"markdown": strings.Repeat("a\n\n---\n\n", lim.Pages+5), "format": "pdf"}, "pages"},
		{"2 MiB of page breaks, pdf", map[string]any{"markdown": fill("a\n\n---\n\n"), "format": "pdf"}, "blocks"},
		{"a slide per heading, pptx", map[string]any{"markdown": fill("# a\n\nb\n\n"), "format": "pptx"}, "blocks"},
		{"a heading per line, pdf", map[string]any{"markdown": fill("# a\n\nb\n\n"), "format": "pdf"}, "blocks"},
		{"blocks to the limit, pdf", map[string]any{"markdown": strings.Repeat("# a\n\nb\n\n", lim.Blocks/2), "format": "pdf"}, ""},
		{"blocks to the limit, docx", map[string]any{"markdown": strings.Repeat("# a\n\nb\n\n", lim.Blocks/2), "format": "docx"}, ""},
		{"slides to the limit, pptx", map[string]any{"markdown": strings.Repeat("# a\n\nb\n\n", lim.Pages-1), "format": "pptx"}, ""},
		{"slides past the limit, pptx", map[string]any{"markdown": strings.Repeat("# a\n\nb\n\n", lim.Pages+5), "format": "pptx"}, "slides"},
		{"largest picture allowed, pdf", map[string]any{"markdown": "![x](big.png)", "format": "pdf", "embeds": []any{map[string]any{"name": "big.png", "content": bigURI}}}, ""},
		{"largest picture allowed, docx", map[string]any{"markdown": "![x](big.png)", "format": "docx", "embeds": []any{map[string]any{"name": "big.png", "content": bigURI}}}, ""},
		{"largest picture allowed, pptx", map[string]any{"markdown": "![x](big.png)", "format": "pptx", "embeds": []any{map[string]any{"name": "big.png", "content": bigURI}}}, ""},
		{"largest 16-bit picture allowed, pdf", map[string]any{"markdown": "![x](deep.png)", "format": "pdf", "embeds": []any{map[string]any{"name": "deep.png", "content": deepURI}}}, ""},
		{"PNG bomb of 1 GiB, pdf", map[string]any{"markdown": "![x](z.png)", "format": "pdf", "embeds": []any{map[string]any{"name": "z.png", "content": bombURI}}}, "decompression bomb"},
	}
	for _, tc := range cases {
		g.ResetPeak()
		res, err := mcptest.TryCallTool(c, "compose_document", tc.args)
		peak := g.Peak()
		t.Logf("%-36s peak %4d MiB", tc.name, peak>>20)
		if n := g.OOMKills(); n > 0 {
			t.Fatalf("%s: the agent was OOM-killed in %d MiB (%v)", tc.name, composeMemoryLimit>>20, err)
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		text := mcptest.Text(res)
		switch {
		case tc.refusedBy == "" && res.IsError:
			t.Errorf("%s: refused: %s", tc.name, text)
		case tc.refusedBy != "" && (!res.IsError || !strings.Contains(text, tc.refusedBy)):
			t.Errorf("%s: %s, want a refusal naming %q", tc.name, truncateText(text), tc.refusedBy)
		}
	}
}

func truncateText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
