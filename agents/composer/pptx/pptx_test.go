package pptx

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	"image/png"
	"io"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"
)

func tinyPNG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPackageIsConsistent checks what PowerPoint checks before it shows a
// file: every part is well-formed XML, every relationship points at a part
// that exists, and every part has a content type. (The composer's tests open
// the files in LibreOffice as well.)
func TestPackageIsConsistent(t *testing.T) {
	p := &Presentation{Title: `Deck <"&">`, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	p.AddSlide(&Slide{TitleSlide: true, Title: "Deck", Subtitle: "sub"})
	p.AddSlide(&Slide{Title: "Text & pictures", Paragraphs: []Paragraph{
		{Runs: []Run{{Text: "bold", Bold: true}, {Text: " link", Link: "https://example.com/?a=1&b=2"}}, Bullet: Dot},
		{Runs: []Run{{Text: "one"}, {Break: true}, {Text: "two\x01"}}, Bullet: Number, Number: 3, Level: 1},
		{Runs: []Run{{Text: "code"}}, Mono: true},
	}, Pictures: []Picture{{Data: tinyPNG(t), Format: "png", Width: 4, Height: 3, Descr: "a <pic>"}}})
	p.AddSlide(&Slide{Title: "Table", Table: &Table{Header: [][]Run{{{Text: "h1"}}, {{Text: "h2"}}}, Rows: [][][]Run{{{{Text: "c"}}}}}})
	zr := write(t, p)
	parts := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		parts[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	if zr.File[0].Name != "[Content_Types].xml" {
		t.Errorf("first member is %s, want [Content_Types].xml", zr.File[0].Name)
	}
	var types struct {
		Defaults []struct {
			Extension string `xml:"Extension,attr"`
		} `xml:"Default"`
		Overrides []struct {
			PartName string `xml:"PartName,attr"`
		} `xml:"Override"`
	}
	if err := xml.Unmarshal(parts["[Content_Types].xml"], &types); err != nil {
		t.Fatal(err)
	}
	typed := map[string]bool{}
	for _, d := range types.Defaults {
		typed["."+d.Extension] = true
	}
	for _, o := range types.Overrides {
		if _, ok := parts[strings.TrimPrefix(o.PartName, "/")]; !ok {
			t.Errorf("content type for missing part %s", o.PartName)
		}
		typed[o.PartName] = true
	}
	for name, data := range parts {
		if !typed["/"+name] && !typed[path.Ext(name)] {
			t.Errorf("part %s has no content type", name)
		}
		if !strings.HasSuffix(name, ".xml") && !strings.HasSuffix(name, ".rels") {
			continue
		}
		d := xml.NewDecoder(bytes.NewReader(data))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s is not well-formed XML: %v", name, err)
				break
			}
		}
		if !strings.HasSuffix(name, ".rels") {
			continue
		}
		var rels struct {
			Rels []struct {
				Target string `xml:"Target,attr"`
				Mode   string `xml:"TargetMode,attr"`
			} `xml:"Relationship"`
		}
		if err := xml.Unmarshal(data, &rels); err != nil {
			t.Fatal(err)
		}
		// _rels/x.xml.rels belongs to x.xml; targets are relative to x's folder.
		base := path.Dir(path.Dir(name))
		for _, r := range rels.Rels {
			if r.Mode == "External" {
				continue
			}
			target := path.Join(base, r.Target)
			if _, ok := parts[target]; !ok {
				t.Errorf("%s points at missing part %s", name, target)
			}
		}
	}
	if !bytes.Contains(parts["ppt/slides/slide2.xml"], []byte(`startAt="3"`)) {
		t.Errorf("numbered paragraph does not start at 3")
	}
}

// TestNumberBeyondStartAt: ECMA-376 bounds a:buAutoNum's startAt to
// 1..32767 (ST_TextBulletStartAtNum), and PowerPoint refuses a file beyond
// it; a list numbered past that shows its numbers as text instead.
func TestNumberBeyondStartAt(t *testing.T) {
	p := &Presentation{}
	p.AddSlide(&Slide{Title: "Long list", Paragraphs: []Paragraph{
		{Runs: []Run{{Text: "last allowed"}}, Bullet: Number, Number: 32767},
		{Runs: []Run{{Text: "beyond"}}, Bullet: Number, Number: 40000},
		{Runs: []Run{{Text: "huge"}}, Bullet: Number, Number: 999999999},
	}})
	zr := write(t, p)
	rc, err := zr.Open("ppt/slides/slide1.xml")
	if err != nil {
		t.Fatal(err)
	}
	slide, _ := io.ReadAll(rc)
	rc.Close()
	d := xml.NewDecoder(bytes.NewReader(slide))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "buAutoNum" {
			for _, a := range se.Attr {
				if n, err := strconv.Atoi(a.Value); a.Name.Local == "startAt" && (err != nil || n < 1 || n > 32767) {
					t.Errorf("buAutoNum startAt=%q, outside 1..32767", a.Value)
				}
			}
		}
	}
	for _, want := range []string{`startAt="32767"`, "40000. ", "999999999. "} {
		if !bytes.Contains(slide, []byte(want)) {
			t.Errorf("slide lacks %q", want)
		}
	}
}

// write writes p and opens the result as a zip archive.
func write(t *testing.T, p *Presentation) *zip.Reader {
	t.Helper()
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// A picture given by Open is read as the package is written, once for each
// place it is shown, and closed; one that cannot be opened fails the write.
func TestPictureOpen(t *testing.T) {
	data := tinyPNG(t)
	opened, closed := 0, 0
	pic := Picture{Format: "png", Width: 4, Height: 3, Open: func() (io.ReadCloser, error) {
		opened++
		return readCloser{bytes.NewReader(data), func() { closed++ }}, nil
	}}
	p := &Presentation{Title: "Deck"}
	p.AddSlide(&Slide{Title: "one", Pictures: []Picture{pic}})
	p.AddSlide(&Slide{Title: "two", Pictures: []Picture{pic}})
	zr := write(t, p)
	media := 0
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, "ppt/media/") {
			continue
		}
		media++
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(got, data) {
			t.Errorf("%s holds %d bytes that are not the picture's %d", f.Name, len(got), len(data))
		}
	}
	if media != 2 || opened != 2 || closed != 2 {
		t.Errorf("%d media parts, opened %d times, closed %d; want 2 of each", media, opened, closed)
	}

	gone := errors.New("the picture is gone")
	p = &Presentation{}
	p.AddSlide(&Slide{Pictures: []Picture{{Format: "png", Width: 4, Height: 3, Open: func() (io.ReadCloser, error) { return nil, gone }}}})
	if err := p.Write(io.Discard); !errors.Is(err, gone) {
		t.Errorf("Write with a picture that cannot be opened: %v, want %v", err, gone)
	}
}

type readCloser struct {
	io.Reader
	close func()
}

func (r readCloser) Close() error { r.close(); return nil }
