// Package composer is the composer agent: it turns Markdown and a few
// embedded pictures into a PDF, DOCX, PPTX, HTML or Markdown document
// (compose_document), and merges PDFs into one (merge_pdfs).
//
// The Markdown is parsed once, with goldmark and its GitHub extensions, into
// a small tree (Document); each output format has one renderer that walks that
// tree: go-pdf/fpdf with embedded DejaVu fonts (and fallback fonts from
// AGENT_FONT_DIRS for other scripts, Arabic shaped and bidi text ordered by
// the composer itself) for PDF, gomutex/godocx for
// DOCX, the package's own OOXML writer (composer/pptx) for PPTX, and plain
// writers for HTML and Markdown. Everything is pure Go: the agent runs no
// program and its binary builds with CGO_ENABLED=0.
package composer

import (
	"fmt"
	"os"
	"reflect"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/composer/fonts"
)

// Info names the agent.
var Info = agentcore.Info{
	Name:    "composer-agent",
	Title:   "Document composer",
	Version: "0.1.0",
	Instructions: "Write the document as Markdown and call compose_document with the format wanted. " +
		"Show pictures with ![alt text](name.png), where name.png is the name of one of the embeds; " +
		"give each picture in embeds by its file name — the client sends the file itself.",
}

// DefaultAddr is where the agent listens unless AGENT_ADDR says otherwise.
const DefaultAddr = ":8002"

// Limits bound what one call may ask for. Each input file is also capped by
// AGENT_MAX_UPLOAD_BYTES while it is received.
type Limits struct {
	// MarkdownBytes is the largest Markdown text.
	MarkdownBytes int
	// Embeds is the most embeds one document may have.
	Embeds int
	// EmbedBytes is the most bytes all embeds of one call may have together.
	EmbedBytes int64
	// ImagePixels is the most pixels (width × height) of one picture.
	ImagePixels int64
	// ConvertPixels is the most pixels of all pictures of one document that
	// must be converted to PNG (WebP, BMP, TIFF, 16-bit or interlaced PNG):
	// decoding costs time and memory however small the file.
	ConvertPixels int64
	// ShownImageBytes is the most bytes of pictures one document may show,
	// each showing counted: docx, pptx and html hold a picture once per
	// place it is shown.
	ShownImageBytes int64
	// Sources is the most PDFs merge_pdfs merges at once.
	Sources int
	// SourceBytes is the most bytes all sources of one merge may have together.
	SourceBytes int64
	// LinkScanBytes is the most bytes the Markdown parser may read in all
	// looking for where link targets end: each unclosed "[text](" on a line
	// makes it read the rest of the line, time quadratic in the line.
	LinkScanBytes int64
	// LinksPerParagraph is the most links ("](") one paragraph (the text
	// between blank lines) may have: parsing time grows with the square of
	// their count. The squares of all paragraphs' counts may add up to 16 ×
	// LinksPerParagraph².
	LinksPerParagraph int
	// Pages is the most pages (pdf, docx: page breaks) or slides (pptx)
	// one document may have.
	Pages int
	// OutputBytes is the most bytes one rendered document may have.
	OutputBytes int64
	// Blocks is the most blocks (headings, paragraphs, list items, tables,
	// code blocks, pictures) one document may have: rendering memory grows
	// with them, and 2 MiB of Markdown may hold half a million.
	Blocks int
	// TableCells is the most cells (columns × rows, the header row
	// included) one table may have, and Cells the most all tables of one
	// document may have together: each cell costs about 1.7 KB to render
	// (PDF, DOCX, PPTX), and 1 MB of Markdown may hold half a million.
	// Both are counted while the Markdown is parsed.
	TableCells int
	Cells      int
	// PictureMemory is the most memory the pictures of all calls running
	// at once may take (their bytes where they are read whole: in PDF and
	// DOCX, and converted pictures; their pixels where they are decoded:
	// converted pictures, PNG in PDF): a call whose pictures do not fit
	// beside the others' waits for them to finish; one whose pictures need
	// more than PictureMemory is refused. Markdown, HTML and PowerPoint
	// copy a picture placed as it is from its file, which takes none.
	PictureMemory int64
	// Inlines is the most lines of text and inline elements (emphasis,
	// links, code spans, breaks) one document may have, counted while it
	// is parsed: each costs 0.5 to 1.5 KB as a tree, and 2 MiB of "*a* "
	// took 755 MiB.
	Inlines int
}

// DefaultLimits are the limits Register uses.
func DefaultLimits() Limits {
	return Limits{
		MarkdownBytes:     2 << 20,
		Embeds:            100,
		EmbedBytes:        200 << 20,
		ImagePixels:       25_000_000,
		ConvertPixels:     100_000_000,
		ShownImageBytes:   200 << 20,
		Sources:           100,
		SourceBytes:       500 << 20,
		LinkScanBytes:     32 << 20,
		LinksPerParagraph: 500,
		Pages:             1000,
		OutputBytes:       256 << 20,
		Blocks:            50_000,
		TableCells:        10_000,
		Cells:             20_000,
		Inlines:           150_000,
		PictureMemory:     256 << 20,
	}
}

// Register reads the agent's settings from the environment (see LoadConfig)
// and adds its tools to svc with the default limits.
func Register(svc *agentcore.Service) error {
	cfg, err := LoadConfig(os.LookupEnv)
	if err != nil {
		return fmt.Errorf("bad configuration: %w", err)
	}
	return RegisterConfig(svc, cfg, DefaultLimits())
}

// RegisterConfig adds the agent's tools (and attach_file, the upload view;
// AGENT_ATTACH_TOOL) to svc with the settings of cfg,
// enforcing lim; zero fields take their defaults.
func RegisterConfig(svc *agentcore.Service, cfg Config, lim Limits) error {
	lim = lim.withDefaults()
	cfg = cfg.withDefaults()
	// pdfcpu would otherwise create a configuration folder in the user's
	// home, which a scratch container does not have.
	api.DisableConfigDir()
	c := &composer{limits: lim, fonts: fonts.NewFallback(cfg.FontDirs), pictures: newPictureMemory(lim.PictureMemory)}
	agentcore.AddTool(svc, agentcore.Tool{
		Name:  "compose_document",
		Title: "Compose a document",
		Description: "Render Markdown (GitHub flavour: headings, emphasis, lists, task lists, tables, code, links, images) " +
			"as a pdf, docx, pptx, html or md document. Pictures are shown with ![alt](name) where name is one of " +
			"the embeds. A line '---' starts a new page (pdf, docx) or slide (pptx); in pptx each # or ## heading " +
			"starts a slide too. html is one self-contained page; md is the Markdown plus images/<name> files.",
		InputTypes: []string{"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/tiff"},
		OutputTypes: []string{
			"application/pdf",
			"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
			"application/vnd.openxmlformats-officedocument.presentationml.presentation",
			"text/html", "text/markdown",
		},
		// A large document renders for a while: a task for a client that
		// supports them (a page done within a second is answered at once).
		Long: true,
	}, c.compose)
	agentcore.AddTool(svc, agentcore.Tool{
		Name:        "merge_pdfs",
		Title:       "Merge PDFs",
		Description: "Merge PDF files into one PDF, in the order given.",
		InputTypes:  []string{"application/pdf"},
		OutputTypes: []string{"application/pdf"},
	}, c.merge)
	// The upload view, so that a user can give the composer pictures and
	// PDFs by drag-and-drop (AGENT_ATTACH_TOOL=false leaves it out).
	return svc.AddAttachTool()
}

// withDefaults returns l with each field that is not positive set to its
// value in DefaultLimits (every field of Limits is an int or an int64).
func (l Limits) withDefaults() Limits {
	v, d := reflect.ValueOf(&l).Elem(), reflect.ValueOf(DefaultLimits())
	for i := range v.NumField() {
		if f := v.Field(i); f.Int() <= 0 {
			f.Set(d.Field(i))
		}
	}
	return l
}

// composer holds the tools' settings.
type composer struct {
	limits Limits
	// fonts is the fallback chain of PDF text, shared by all calls.
	fonts *fonts.Fallback
	// pictures is the memory the pictures of all calls may hold at once.
	pictures *pictureMemory
}
