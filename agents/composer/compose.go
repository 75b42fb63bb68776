package composer

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/composer/fonts"
	"github.com/agentura/agentura/filetype"
)

// EmbedItem is a picture the Markdown may show by its name.
type EmbedItem struct {
	Name        string                `json:"name" jsonschema:"the picture's file name, as the markdown refers to it: ![alt](name)"`
	Content     agentcore.FileContent `json:"content,omitempty" jsonschema:"the picture (PNG, JPEG, GIF, WebP, BMP or TIFF)"`
	Description string                `json:"description,omitempty" jsonschema:"what the picture shows; used as its alt text when the markdown gives none"`
}

// ComposeInput are the arguments of compose_document.
type ComposeInput struct {
	Markdown string      `json:"markdown" jsonschema:"the document's content as Markdown (GitHub flavour)"`
	Format   string      `json:"format,omitempty" jsonschema:"pdf (default), docx, pptx, html or md"`
	Title    string      `json:"title,omitempty" jsonschema:"the document's title (default: its first # heading)"`
	Filename string      `json:"filename,omitempty" jsonschema:"output file name without extension (default: from the title, else document)"`
	Embeds   []EmbedItem `json:"embeds,omitempty" jsonschema:"pictures the markdown shows by name"`
}

// Formats returns the output formats of compose_document, by name.
func Formats() []string { return []string{"pdf", "docx", "pptx", "html", "md"} }

// composePhases are the steps compose_document reports (Call.Progress):
// markdown checked, pictures loaded, document rendered, output stored.
const composePhases = 4

// errNotStored stops a rendering whose output the store no longer reads.
var errNotStored = errors.New("the output was not stored")

func (c *composer) compose(ctx context.Context, call *agentcore.Call, in ComposeInput) (*agentcore.Result, error) {
	format := cmp.Or(strings.ToLower(strings.TrimPrefix(strings.TrimSpace(in.Format), ".")), "pdf")
	if format == "markdown" {
		format = "md"
	}
	if !slices.Contains(Formats(), format) {
		return nil, fmt.Errorf("unknown format %q: use one of %s", in.Format, strings.Join(Formats(), ", "))
	}
	if strings.TrimSpace(in.Markdown) == "" {
		return nil, errors.New("markdown is empty: give the document's content as Markdown")
	}
	if len(in.Markdown) > c.limits.MarkdownBytes {
		return nil, fmt.Errorf("markdown is %d bytes, more than the %d (%s) allowed: split the document", len(in.Markdown), c.limits.MarkdownBytes, filetype.Size(int64(c.limits.MarkdownBytes)))
	}
	if err := checkNesting(in.Markdown); err != nil {
		return nil, err
	}
	if err := checkLinkScan(in.Markdown, c.limits.LinkScanBytes); err != nil {
		return nil, err
	}
	if err := checkParagraphLinks(in.Markdown, c.limits.LinksPerParagraph); err != nil {
		return nil, err
	}
	call.Progress(1, composePhases, "markdown checked")
	images, release, err := c.loadEmbeds(ctx, call, in.Embeds, format)
	if err != nil {
		return nil, err
	}
	defer release()
	call.Progress(2, composePhases, fmt.Sprintf("%d picture(s) loaded", len(images)))
	doc, err := ParseLimited([]byte(in.Markdown), in.Title, c.limits)
	if err != nil {
		return nil, err
	}
	if err := doc.bind(images); err != nil {
		return nil, err
	}
	addDescriptions(doc)
	if err := c.checkShown(doc); err != nil {
		return nil, err
	}
	if err := checkPages(doc, format, c.limits); err != nil {
		return nil, err
	}
	doc.MaxSlides = c.limits.Pages

	name := outputName(in.Filename, doc.Title, format)
	// The document goes to the store as it is rendered (and, to an A2A
	// caller that asks for chunks, out in chunks as it is written): a
	// rendering that fails ends the stream with its error, and the store
	// keeps nothing of it.
	rendered := make(chan error, 1)
	var (
		stats   renderStats
		written int64
	)
	used := doc.Images()
	pr, pw := io.Pipe()
	span := startRender(ctx, format)
	go func() {
		var err error
		defer func() {
			if p := recover(); p != nil { // as the tool's own goroutine would be: a failed call, not a dead agent
				err = fmt.Errorf("rendering the %s failed: %v", format, p)
			}
			pw.CloseWithError(err)
			rendered <- err
		}()
		bw := bufio.NewWriterSize(pw, 64<<10)
		lw := &limitedWriter{w: bw, max: c.limits.OutputBytes}
		if stats, err = doc.render(lw, format, c.fonts); err == nil {
			err = bw.Flush()
		}
		written = lw.n
	}()
	call.Progress(3, composePhases, "rendering "+name)
	outputs := []agentcore.Output{agentcore.OutputReader(name, pr)}
	if format == "md" {
		for _, img := range used {
			outputs = append(outputs, agentcore.OutputFile("images/"+img.FileName, img.Path))
		}
	}
	res, err := call.FileResponse(ctx, outputs...)
	pr.CloseWithError(errNotStored) // a rendering still writing stops
	renderErr := <-rendered
	endRender(span, stats, written, renderErr)
	switch {
	case renderErr != nil && !errors.Is(renderErr, errNotStored):
		return nil, renderErr // the store read the rendering's error, and kept nothing
	case err != nil:
		return nil, err
	}
	call.Progress(composePhases, composePhases, name+" stored")
	res.Text = fmt.Sprintf("Composed %s with %d picture(s).", name, len(used))
	if unused := unusedEmbeds(images, used); len(unused) > 0 {
		res.Text += fmt.Sprintf(" Embeds the markdown does not show (left out): %s.", strings.Join(unused, ", "))
	}
	res.Data = map[string]any{"format": format, "images": len(used)}
	if note := missingNote(stats.missing, c.fonts.Dirs()); note != "" {
		res.Text += " " + note
		res.Data["missing_glyphs"] = missingList(stats.missing)
	}
	return res, nil
}

// loadEmbeds resolves the embeds into pictures, keyed by their names. The
// pictures are checked and converted only once the call holds what they
// take to render of the agent's picture memory (Limits.PictureMemory,
// renderMemory), which it keeps until release is called (after the output
// is stored).
func (c *composer) loadEmbeds(ctx context.Context, call *agentcore.Call, embeds []EmbedItem, format string) (images map[string]*Image, release func(), err error) {
	release = func() {}
	if len(embeds) > c.limits.Embeds {
		return nil, release, fmt.Errorf("%d embeds, more than the %d allowed in one document", len(embeds), c.limits.Embeds)
	}
	type resolved struct {
		e    EmbedItem
		name string
		f    *agentcore.InputFile
	}
	var files []resolved
	var total int64
	taken := map[string]bool{}
	for i, e := range embeds {
		f, err := call.ResolveFile(ctx, e.Name, string(e.Content))
		if err != nil {
			if errors.Is(err, agentcore.ErrUnresolvedReference) {
				return nil, release, fmt.Errorf("embeds[%d] %q was not resolved to a file: %w", i, e.Name, err)
			}
			return nil, release, fmt.Errorf("embeds[%d]: %w", i, err)
		}
		name := cmp.Or(strings.TrimSpace(e.Name), f.Name)
		if taken[name] {
			return nil, release, fmt.Errorf("two embeds are named %q: give each picture its own name", name)
		}
		taken[name] = true
		if total += f.Size; total > c.limits.EmbedBytes {
			return nil, release, fmt.Errorf("the embeds are larger than the %s allowed together: send fewer or smaller pictures", filetype.Size(c.limits.EmbedBytes))
		}
		files = append(files, resolved{e, name, f})
	}
	var need int64
	for _, r := range files {
		need += renderMemory(r.f.Path, r.f.Size, format)
	}
	if release, err = c.pictures.take(ctx, need); err != nil {
		return nil, func() {}, err
	}
	images = map[string]*Image{}
	fileNames := map[string]bool{}
	convert := &pixelBudget{left: c.limits.ConvertPixels, limit: c.limits.ConvertPixels}
	for _, r := range files {
		img, err := loadImage(r.name, r.f.Name, r.f.Path, r.f.MIMEType, c.limits.ImagePixels, convert)
		if err != nil {
			release()
			return nil, func() {}, err
		}
		img.Description = strings.TrimSpace(r.e.Description)
		// Two pictures never share a file name under images/.
		img.FileName = agentcore.UniqueName(img.FileName, fileNames)
		images[r.name] = img
	}
	return images, release, nil
}

// checkShown refuses a document whose pictures, counted once per place they
// are shown, exceed the limit: docx, pptx and html hold a copy at each place,
// so a short Markdown showing one picture many times would make a huge file.
func (c *composer) checkShown(doc *Document) error {
	var total int64
	figs := figures(doc.Blocks)
	for _, f := range figs {
		total += f.Image.byteSize()
	}
	if total > c.limits.ShownImageBytes {
		return fmt.Errorf("the markdown has %d pictures shown, %s together (each showing counts, as the document holds a copy at each place), more than the %s allowed: show pictures fewer times, or smaller ones",
			len(figs), filetype.Size(total), filetype.Size(c.limits.ShownImageBytes))
	}
	return nil
}

// addDescriptions uses an embed's description as the alt text of figures
// that have none.
func addDescriptions(doc *Document) {
	for _, f := range figures(doc.Blocks) {
		f.Alt = cmp.Or(f.Alt, f.Image.Description)
	}
}

// Images returns the pictures the document shows, each once, in order.
func (d *Document) Images() []*Image {
	var out []*Image
	for _, f := range figures(d.Blocks) {
		if f.Image != nil && !slices.Contains(out, f.Image) {
			out = append(out, f.Image)
		}
	}
	return out
}

func unusedEmbeds(images map[string]*Image, used []*Image) []string {
	var out []string
	for name, img := range images {
		if !slices.Contains(used, img) {
			out = append(out, fmt.Sprintf("%q", name))
		}
	}
	slices.Sort(out)
	return out
}

// renderStats is what rendering a document counted.
type renderStats struct {
	missing map[rune]bool // a PDF's characters no font had
	pages   int           // a PDF's pages
	slides  int           // a PPTX's slides
}

// render renders d in format (one of Formats) to w, with fb as the fallback
// chain of PDF text for characters the embedded fonts lack (nil: none). It
// counts the PDF characters no font had (they show as empty boxes) and the
// pages or slides of the formats that have them.
func (d *Document) render(w io.Writer, format string, fb *fonts.Fallback) (renderStats, error) {
	switch format {
	case "pdf":
		missing, pages, err := d.writePDF(w, fb)
		return renderStats{missing: missing, pages: pages}, err
	case "docx":
		return renderStats{}, d.writeDOCX(w)
	case "pptx":
		slides, err := d.writePPTX(w)
		return renderStats{slides: slides}, err
	case "html":
		return renderStats{}, d.writeHTML(w)
	case "md":
		return renderStats{}, d.writeMarkdown(w)
	}
	return renderStats{}, fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(Formats(), ", "))
}

// outputName is the produced file's name: the requested name (or one made
// from the title) with the format's extension.
func outputName(requested, title, format string) string {
	name := agentcore.SanitizeName(strings.TrimSpace(requested))
	// Extensions of documents are dropped before the format's own is added.
	for _, ext := range []string{".pdf", ".docx", ".doc", ".pptx", ".ppt", ".html", ".htm", ".md", ".markdown"} {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			name = name[:len(name)-len(ext)]
			break
		}
	}
	return cmp.Or(name, slug(title), "document") + "." + format
}

// slug makes a file name of a title: letters and digits kept, runs of
// anything else one dash, at most 60 bytes.
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && unicode.IsLetter(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	return agentcore.SanitizeName(b.String())
}

// writeFile creates path and fills it with write, through a buffer.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err = write(bw); err == nil {
		err = bw.Flush()
	}
	if err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
