package pptx_test

import (
	"archive/zip"
	"bytes"
	"fmt"

	"github.com/agentura/agentura/agents/composer/pptx"
)

func Example() {
	deck := &pptx.Presentation{Title: "Demo"}
	deck.AddSlide(&pptx.Slide{TitleSlide: true, Title: "Demo", Subtitle: "made in Go"})
	deck.AddSlide(&pptx.Slide{Title: "Points", Paragraphs: []pptx.Paragraph{
		{Runs: []pptx.Run{{Text: "first", Bold: true}}, Bullet: pptx.Dot},
		{Runs: []pptx.Run{{Text: "second"}}, Bullet: pptx.Dot, Level: 1},
	}})
	var buf bytes.Buffer
	if err := deck.Write(&buf); err != nil {
		fmt.Println(err)
		return
	}
	zr, _ := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	for _, f := range zr.File {
		if len(f.Name) > 11 && f.Name[:11] == "ppt/slides/" {
			fmt.Println(f.Name)
		}
	}
	// Output:
	// ppt/slides/slide1.xml
	// ppt/slides/_rels/slide1.xml.rels
	// ppt/slides/slide2.xml
	// ppt/slides/_rels/slide2.xml.rels
}
