// Package pptx writes PowerPoint presentations (Office Open XML,
// ECMA-376) from a plain description: slides with a title, paragraphs of
// styled runs with bullets, pictures and tables. It writes the few parts a
// presentation needs — one slide master, two layouts, a theme — and lays each
// slide out itself, so the files open in PowerPoint and LibreOffice alike.
//
// No maintained pure-Go library for PPTX exists; this package writes only
// what the composer needs.
package pptx

import (
	"archive/zip"
	"fmt"
	"io"
	"strings"
	"time"
)

// Slide size: 16:9, in EMU (914400 per inch).
const (
	SlideWidth  = 12192000
	SlideHeight = 6858000
)

// Presentation is a deck being built. The zero value is ready to use.
type Presentation struct {
	// Title goes into the document properties.
	Title string
	// Created is the creation time in the document properties (now if zero).
	Created time.Time

	slides []*Slide
}

// Slide is one slide. A title slide shows Title and Subtitle centred;
// a content slide shows Title at the top, then Paragraphs, Table and
// Pictures: text on the left and pictures on the right when it has both.
type Slide struct {
	// TitleSlide makes this a title slide.
	TitleSlide bool
	Title      string
	Subtitle   string
	Paragraphs []Paragraph
	Table      *Table
	Pictures   []Picture
}

// Bullet is how a paragraph is marked.
type Bullet int

// Paragraph marks.
const (
	NoBullet Bullet = iota
	Dot
	Number
)

// Paragraph is a line of body text.
type Paragraph struct {
	Runs []Run
	// Level is the outline level, 0 to 8.
	Level  int
	Bullet Bullet
	// Number is the first number of a numbered list; the list's following
	// paragraphs continue it when they have the same Level.
	Number int
	// Mono sets the whole paragraph in a monospace font (code).
	Mono bool
	// Heading sets the paragraph larger and bold.
	Heading bool
}

// Run is text with one style. A run with Break set is a line break.
type Run struct {
	Text   string
	Bold   bool
	Italic bool
	Strike bool
	Code   bool
	Link   string
	Break  bool
}

// Table is a table with a header row.
type Table struct {
	Header [][]Run
	Rows   [][][]Run
}

// Picture is an image to place on a slide.
type Picture struct {
	// Data is the encoded picture; Format is "png", "jpeg" or "gif".
	Data []byte
	// Open, when set, opens the encoded picture instead of Data: it is
	// read as the presentation is written, and never held in memory.
	Open   func() (io.ReadCloser, error)
	Format string
	// Width and Height are its size in pixels (for the aspect ratio).
	Width, Height int
	// Descr is its alternative text.
	Descr string
}

// AddSlide appends s.
func (p *Presentation) AddSlide(s *Slide) { p.slides = append(p.slides, s) }

// Len returns the number of slides.
func (p *Presentation) Len() int { return len(p.slides) }

// Write writes the presentation as a .pptx file. A presentation without
// slides gets one empty title slide, since PowerPoint shows nothing otherwise.
func (p *Presentation) Write(w io.Writer) error {
	slides := p.slides
	if len(slides) == 0 {
		slides = []*Slide{{TitleSlide: true, Title: p.Title}}
	}
	created := p.Created
	if created.IsZero() {
		created = time.Now()
	}
	// Slides first, in memory, so that the package can open with its
	// content types: media names and extensions are known only then.
	type part struct{ name, content string }
	var slideParts []part
	imgExts := map[string]bool{}
	var media []mediaFile
	for i, s := range slides {
		sb := newSlideBuilder(i + 1)
		xmlText, err := sb.build(s)
		if err != nil {
			return fmt.Errorf("slide %d: %w", i+1, err)
		}
		for _, m := range sb.media {
			name := fmt.Sprintf("image%d.%s", len(media)+1, m.ext)
			m.rel.target = "../media/" + name
			imgExts[m.ext] = true
			media = append(media, m)
		}
		slideParts = append(slideParts, part{fmt.Sprintf("ppt/slides/slide%d.xml", i+1), xmlText},
			part{fmt.Sprintf("ppt/slides/_rels/slide%d.xml.rels", i+1), sb.relsXML()})
	}
	parts := append([]part{
		{"[Content_Types].xml", contentTypes(len(slides), imgExts)},
		{"_rels/.rels", rootRels},
		{"docProps/core.xml", coreProps(p.Title, created)},
		{"docProps/app.xml", appProps(len(slides))},
		{"ppt/presentation.xml", presentationXML(len(slides))},
		{"ppt/_rels/presentation.xml.rels", presentationRels(len(slides))},
		{"ppt/presProps.xml", presProps},
		{"ppt/viewProps.xml", viewProps},
		{"ppt/tableStyles.xml", tableStyles},
		{"ppt/theme/theme1.xml", themeXML},
		{"ppt/slideMasters/slideMaster1.xml", slideMasterXML},
		{"ppt/slideMasters/_rels/slideMaster1.xml.rels", slideMasterRels},
		{"ppt/slideLayouts/slideLayout1.xml", titleLayoutXML},
		{"ppt/slideLayouts/_rels/slideLayout1.xml.rels", layoutRels},
		{"ppt/slideLayouts/slideLayout2.xml", titleOnlyLayoutXML},
		{"ppt/slideLayouts/_rels/slideLayout2.xml.rels", layoutRels},
	}, slideParts...)
	zw := zip.NewWriter(w)
	for _, part := range parts {
		f, err := zw.Create(part.name)
		if err == nil {
			_, err = io.WriteString(f, part.content)
		}
		if err != nil {
			return err
		}
	}
	for _, m := range media {
		// Pictures are compressed already.
		f, err := zw.CreateHeader(&zip.FileHeader{Name: "ppt/" + strings.TrimPrefix(m.rel.target, "../"), Method: zip.Store})
		if err != nil {
			return err
		}
		if m.open == nil {
			_, err = f.Write(m.data)
		} else {
			err = copyMedia(f, m.open)
		}
		if err != nil {
			return err
		}
	}
	return zw.Close()
}

// copyMedia writes the picture open opens to w.
func copyMedia(w io.Writer, open func() (io.ReadCloser, error)) error {
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(w, r)
	return err
}

// esc escapes text for XML character data and attribute values, dropping
// the control characters XML 1.0 does not allow.
func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteRune(r)
		case r < 0x20 || r == 0xFFFE || r == 0xFFFF:
			// not allowed in XML
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
