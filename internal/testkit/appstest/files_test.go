package appstest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/composer"
	"github.com/agentura/agentura/internal/testkit/requiretool"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// screenshots, when set, is where the tests write the pictures of the
// views that docs/apps.md shows: go test ./internal/testkit/appstest -screenshots "$PWD/docs/img"
var screenshots = flag.String("screenshots", "", "folder to write the views' screenshots to (docs/img)")

// hostileName is a file name that is HTML: a view must show it as text.
const hostileName = `<img src=x onerror=alert(1)>.png`

// chartPNG draws a small bar chart: the picture the documents embed.
func chartPNG(t *testing.T) []byte {
	t.Helper()
	const w, h = 480, 220
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{0xf7, 0xf9, 0xfc, 0xff})
		}
	}
	bars := []struct {
		height int
		c      color.RGBA
	}{{90, color.RGBA{0x4c, 0x78, 0xa8, 0xff}}, {130, color.RGBA{0xf5, 0x85, 0x18, 0xff}}, {160, color.RGBA{0x54, 0xa2, 0x4b, 0xff}}, {185, color.RGBA{0xe4, 0x57, 0x56, 0xff}}}
	for i, b := range bars {
		x0 := 40 + i*110
		for y := h - 20 - b.height; y < h-20; y++ {
			for x := x0; x < x0+70; x++ {
				img.Set(x, y, b.c)
			}
		}
	}
	for x := 20; x < w-20; x++ {
		img.Set(x, h-20, color.RGBA{0x33, 0x33, 0x33, 0xff})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// HandBackInput is the input of the test tool hand_back.
type HandBackInput struct {
	Source agentcore.FileAttachment `json:"source"`
	Name   string                   `json:"name"`
}

// handBack hands its input back under the name asked: a file name chosen
// by whoever calls, as a hostile one would be.
func handBack(ctx context.Context, call *agentcore.Call, in HandBackInput) (*agentcore.Result, error) {
	f, err := call.ResolveFileAttachment(ctx, in.Source)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, err
	}
	return call.FileResponse(ctx, agentcore.OutputBytes(in.Name, data))
}

func registerFiles(svc *agentcore.Service) error {
	if err := composer.Register(svc); err != nil {
		return err
	}
	agentcore.AddTool(svc, agentcore.Tool{Name: "hand_back", Description: "Hand a file back under another name."}, handBack)
	return nil
}

// producedFiles reads the files of a result's structured content.
func producedFiles(t *testing.T, res *mcp.CallToolResult) []transfer.File {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	var many struct {
		Files []transfer.File `json:"files"`
	}
	if json.Unmarshal(raw, &many) == nil && len(many.Files) > 0 {
		return many.Files
	}
	var one transfer.File
	if err := json.Unmarshal(raw, &one); err != nil || one.DownloadURL == "" {
		t.Fatalf("no files in the result: %s", raw)
	}
	return []transfer.File{one}
}

func saveScreenshot(t *testing.T, b *browser, name string) {
	t.Helper()
	shot := b.screenshot(t)
	dir := *screenshots
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// TestFileView shows produced files in the file view, in a real browser
// under the CSP the view declares: the previews of a Markdown page with its
// image (shown once, not again in the picture's own card), of a PNG and of a
// PDF, the download button fetching bytes of the announced sha256, a hostile
// file name shown as text, and a fetch to any origin but the agent's refused
// by the CSP.
func TestFileView(t *testing.T) {
	b := newBrowser(t)
	a := startAgent(t, registerFiles, nil)
	h := newHost(t, a)
	chart := chartPNG(t)
	chartURI := "data:image/png;base64," + base64.StdEncoding.EncodeToString(chart)

	t.Run("Declaration", func(t *testing.T) {
		ui := uiMeta(a.tools["compose_document"].Meta)
		if ui["resourceUri"] != transfer.FilesViewURI {
			t.Errorf("compose_document _meta.ui = %v, want resourceUri %s", ui, transfer.FilesViewURI)
		}
	})

	t.Run("MarkdownWithImage", func(t *testing.T) {
		args := map[string]any{
			"markdown": "# Quarterly report\n\nRevenue grew **12 %** over the quarter; the *new region* led.\n\n" +
				"![Revenue by quarter](chart.png)\n\n- Q1: 1.2 M\n- Q2: 1.4 M\n- Q3: 1.7 M\n",
			"format": "md", "filename": "report.md",
			"embeds": []any{map[string]any{"name": "chart.png", "content": chartURI}},
		}
		res := a.call(t, "compose_document", args)
		b.open(t, h.newSession(t, "compose_document", args, res, "light"))
		// The picture is shown once, in the page: its own card (images/chart.png)
		// keeps its thumbnail and button but no second large preview.
		b.waitView(t, `document.body.dataset.ready === "1" && [...document.querySelectorAll(".preview")].every(p => p.dataset.loaded === "1") && [...document.querySelectorAll(".md img")].every(i => i.complete && i.naturalWidth > 0) && document.querySelector('.card[data-kind="image"]').dataset.shownIn !== undefined`, 30*time.Second)
		var got struct {
			H1, Strong, Folder, ShownIn, Note                      string
			MDImages, MDImageWidth, Pictures, Thumbs, Items, Cards int
		}
		b.view(t, `(() => { const md = document.querySelector('.card[data-kind="markdown"] .md');
			const card = document.querySelector('.card[data-kind="image"]');
			return { H1: md.querySelector("h1").textContent, Strong: (md.querySelector("strong") || {}).textContent || "",
				Folder: document.querySelector(".folder > summary").textContent,
				ShownIn: card.dataset.shownIn, Note: (card.querySelector(".shown") || {}).textContent || "",
				MDImages: md.querySelectorAll("img").length, MDImageWidth: (md.querySelector("img") || {}).naturalWidth || 0,
				Pictures: document.querySelectorAll(".preview img").length, Thumbs: card.querySelectorAll(".thumb img").length,
				Items: md.querySelectorAll("li").length, Cards: document.querySelectorAll(".card").length }; })()`, &got)
		want := struct {
			H1, Strong, Folder, ShownIn, Note                      string
			MDImages, MDImageWidth, Pictures, Thumbs, Items, Cards int
		}{"Quarterly report", "12 %", "images/", "report.md", "Shown in report.md", 1, 480, 1, 1, 3, 2}
		if got != want {
			t.Errorf("the view shows %+v, want %+v", got, want)
		}
		saveScreenshot(t, b, "apps-files-markdown.png")
	})

	t.Run("HostIgnoresTheCSP", func(t *testing.T) {
		// Under the extension's restrictive default nothing of the agent
		// loads: every file is still listed, with its digest and link.
		args := map[string]any{"markdown": "# Notes\n\n![Chart](chart.png)\n", "format": "md", "filename": "notes.md",
			"embeds": []any{map[string]any{"name": "chart.png", "content": chartURI}}}
		res := a.call(t, "compose_document", args)
		files := producedFiles(t, res)
		b.open(t, h.newSessionIgnoringCSP(t, "compose_document", args, res, "light"))
		b.waitView(t, `document.querySelectorAll(".preview").length === 2 && [...document.querySelectorAll(".preview")].every(p => p.textContent.startsWith("No preview"))`, 30*time.Second)
		var got struct {
			Names, Links, SHAs []string
		}
		b.view(t, `({ Names: [...document.querySelectorAll(".name")].map(e => e.title), Links: [...document.querySelectorAll("a.button")].map(a => a.href),
			SHAs: [...document.querySelectorAll(".sha")].map(e => e.textContent.replace("sha256 ", "")) })`, &got)
		for i, f := range files {
			if i >= len(got.Names) || got.Names[i] != f.Filename || got.Links[i] != f.DownloadURL || got.SHAs[i] != f.SHA256 {
				t.Errorf("file %d: the view shows %+v; want %s with its link and sha256", i, got, f.Filename)
			}
		}
	})

	t.Run("PDFDownload", func(t *testing.T) {
		requiretool.Command(t, "pdftoppm", "apt-get install poppler-utils (.ci/apt.d/apps.txt): the agent renders a PDF's first page with it")
		args := map[string]any{"markdown": "# Invoice 2026-114\n\nThree lines, one total.\n", "format": "pdf", "filename": "invoice.pdf"}
		res := a.call(t, "compose_document", args)
		file := producedFiles(t, res)[0]
		b.open(t, h.newSession(t, "compose_document", args, res, "dark"))
		b.waitView(t, `document.querySelector('.card[data-kind="pdf"] .meta[data-pages]') && document.querySelector('.card[data-kind="pdf"] .preview[data-loaded="1"]')`, 30*time.Second)
		var pages string
		b.view(t, `document.querySelector('.card[data-kind="pdf"] .meta').dataset.pages`, &pages)
		if pages != "1" {
			t.Errorf("the view counts %s pages in the PDF, want 1", pages)
		}
		// The first page, rendered by the agent (pdftoppm) for the download
		// URL with &preview=1, under the view's CSP.
		var page struct {
			Src           string
			Width, Height int
		}
		b.view(t, `(() => { const i = document.querySelector('.card[data-kind="pdf"] .preview img.page');
			return { Src: i.src, Width: i.naturalWidth, Height: i.naturalHeight }; })()`, &page)
		if page.Width <= 0 || page.Height <= page.Width || page.Src != file.DownloadURL+"&preview=1" {
			t.Errorf("the PDF's first page shows as %+v; want a portrait picture from %s&preview=1", page, file.DownloadURL)
		}
		r, err := http.Get(page.Src)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(r.Body)
		r.Body.Close()
		if err != nil || img.Bounds().Dx() != page.Width || img.Bounds().Dy() != page.Height {
			t.Errorf("the preview the view shows does not decode as a PNG of %d×%d: %v", page.Width, page.Height, err)
		}
		saveScreenshot(t, b, "apps-files-dark.png")
		b.view(t, `document.querySelector('.card[data-kind="pdf"] a.button').click()`, nil)
		b.waitHost(t, "window.__host.downloads.length === 1", 30*time.Second)
		var dl []struct {
			URL, SHA256, Error string
			Size               int64
		}
		b.host(t, "window.__host.downloads", &dl)
		if dl[0].Error != "" || dl[0].URL != file.DownloadURL || dl[0].SHA256 != file.SHA256 || dl[0].Size != file.SizeBytes {
			t.Errorf("download through ui/open-link = %+v; want %s, %d bytes of sha256 %s", dl[0], file.DownloadURL, file.SizeBytes, file.SHA256)
		}
		// The agent's bytes, fetched here too, are those bytes.
		r, err = http.Get(file.DownloadURL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != file.SHA256 {
			t.Errorf("the PDF's bytes have sha256 %x, the result says %s", sum, file.SHA256)
		}
	})

	t.Run("HostileNameAndCSP", func(t *testing.T) {
		var probes atomic.Int64
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			probes.Add(1)
			w.Header().Set("Access-Control-Allow-Origin", "*")
			io.WriteString(w, "reached")
		}))
		defer other.Close()
		args := map[string]any{"source": map[string]any{"name": "chart.png", "content": chartURI}, "name": hostileName}
		res := a.call(t, "hand_back", args)
		file := producedFiles(t, res)[0]
		if file.Filename != hostileName {
			t.Fatalf("the agent named the file %q, want %q kept as given", file.Filename, hostileName)
		}
		b.open(t, h.newSession(t, "hand_back", args, res, "light"))
		b.waitView(t, `document.querySelector(".preview").dataset.loaded === "1"`, 30*time.Second)
		var shown struct {
			Name             string
			NameChildren, Xs int
			Alt              string
		}
		b.view(t, `({ Name: document.querySelector(".name").textContent, NameChildren: document.querySelector(".name").children.length,
			Xs: [...document.querySelectorAll("img")].filter(i => i.getAttribute("src") === "x").length,
			Alt: document.querySelector(".preview img").alt })`, &shown)
		if shown.Name != hostileName || shown.NameChildren != 0 || shown.Xs != 0 || shown.Alt != hostileName {
			t.Errorf("the view shows the name as %+v; want the text %q, no element made of it", shown, hostileName)
		}

		saveScreenshot(t, b, "apps-files-hostile.png")

		// The CSP of _meta.ui.csp: the agent's origin is reachable, no other.
		var fromAgent bool
		b.view(t, fmt.Sprintf(`fetch(%q).then(r => r.ok, () => false)`, file.DownloadURL), &fromAgent)
		if !fromAgent {
			t.Error("the view could not fetch its file from the agent's origin")
		}
		var elsewhere []string
		b.view(t, fmt.Sprintf(`Promise.all([
			fetch(%[1]q + "/fetch").then(() => "reached", e => "blocked"),
			new Promise(r => { const i = new Image(); i.onload = () => r("reached"); i.onerror = () => r("blocked"); i.src = %[1]q + "/img.png"; }),
			new Promise(r => { try { const ws = new WebSocket(%[2]q); ws.onopen = () => r("reached"); ws.onerror = () => r("blocked"); } catch (e) { r("blocked"); } }),
		])`, other.URL, "ws"+other.URL[len("http"):]+"/ws"), &elsewhere)
		for i, what := range []string{"fetch", "image", "WebSocket"} {
			if elsewhere[i] != "blocked" {
				t.Errorf("a %s from the view to %s was not blocked: %s", what, other.URL, elsewhere[i])
			}
		}
		if n := probes.Load(); n != 0 {
			t.Errorf("the other origin received %d requests from the view; the CSP should stop them before they leave", n)
		}
	})
}
