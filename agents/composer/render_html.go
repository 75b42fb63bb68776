package composer

import (
	"bufio"
	"cmp"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
)

// htmlStyle is the page's whole style sheet: the page is one file.
const htmlStyle = `body{font-family:"DejaVu Sans",system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#222}
pre{background:#f2f2f2;padding:.6rem;overflow-x:auto}code{font-family:"DejaVu Sans Mono",monospace}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #aaa;padding:.25rem .5rem}th{background:#e6eaf2}
figure{margin:1rem 0;text-align:center}figure img{max-width:100%;height:auto}figcaption{color:#555;font-style:italic;font-size:.9em}
blockquote{color:#555;border-left:3px solid #ccc;margin-left:0;padding-left:1rem}`

// writeHTML renders d as one self-contained HTML page: pictures are inlined
// as data: URIs, the style sheet is in the page.
func (d *Document) writeHTML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	h := &htmlWriter{w: bw}
	h.s("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>")
	h.text(cmp.Or(d.Title, "Document"))
	h.s("</title>\n<style>\n" + htmlStyle + "\n</style>\n</head>\n<body>\n")
	if d.ShowTitle {
		h.s("<h1>")
		h.text(d.Title)
		h.s("</h1>\n")
	}
	h.blocks(d.Blocks)
	h.s("</body>\n</html>\n")
	if h.err != nil {
		return h.err
	}
	return bw.Flush()
}

// htmlWriter writes HTML; write errors surface at Flush, those of reading
// a picture in err.
type htmlWriter struct {
	w   *bufio.Writer
	err error
}

func (h *htmlWriter) s(s string)    { h.w.WriteString(s) }
func (h *htmlWriter) text(s string) { h.w.WriteString(html.EscapeString(s)) }

func (h *htmlWriter) blocks(blocks []Block) {
	for _, b := range blocks {
		h.block(b)
	}
}

func (h *htmlWriter) block(b Block) {
	switch b := b.(type) {
	case *Heading:
		tag := "h" + strconv.Itoa(min(max(b.Level, 1), 6))
		h.s("<" + tag + ">")
		h.spans(b.Spans)
		h.s("</" + tag + ">\n")
	case *Paragraph:
		h.s("<p>")
		h.spans(b.Spans)
		h.s("</p>\n")
	case *List:
		tag := "ul"
		if b.Ordered {
			tag = "ol"
			if b.Start != 1 {
				tag += ` start="` + strconv.Itoa(b.Start) + `"`
			}
		}
		h.s("<" + tag + ">\n")
		for _, it := range b.Items {
			h.s("<li>")
			h.s(map[string]string{"todo": `<input type="checkbox" disabled> `, "done": `<input type="checkbox" checked disabled> `}[it.Task])
			// Tight items hold one paragraph: no <p> around it.
			if len(it.Blocks) > 0 {
				if p, ok := it.Blocks[0].(*Paragraph); ok {
					h.spans(p.Spans)
					h.s("\n")
					h.blocks(it.Blocks[1:])
				} else {
					h.blocks(it.Blocks)
				}
			}
			h.s("</li>\n")
		}
		h.s("</" + tag[:2] + ">\n")
	case *Table:
		h.s("<table>\n<thead><tr>")
		for i, c := range b.Header {
			h.s("<th" + htmlAlign[b.Align[i]] + ">")
			h.spans(c)
			h.s("</th>")
		}
		h.s("</tr></thead>\n<tbody>\n")
		for _, row := range b.Rows {
			h.s("<tr>")
			for i, c := range row {
				h.s("<td" + htmlAlign[b.Align[i]] + ">")
				h.spans(c)
				h.s("</td>")
			}
			h.s("</tr>\n")
		}
		h.s("</tbody>\n</table>\n")
	case *CodeBlock:
		h.s("<pre><code")
		if b.Lang != "" {
			h.s(` class="language-`)
			h.text(b.Lang)
			h.s(`"`)
		}
		h.s(">")
		h.text(b.Text)
		h.s("</code></pre>\n")
	case *Quote:
		h.s("<blockquote>\n")
		h.blocks(b.Blocks)
		h.s("</blockquote>\n")
	case *Figure:
		h.s(`<figure><img src="data:` + b.Image.MIMEType + ";base64,")
		enc := base64.NewEncoder(base64.StdEncoding, h.w)
		if err := b.Image.copyTo(enc); err != nil && h.err == nil {
			h.err = fmt.Errorf("picture %q: %w", b.Image.Name, err)
		}
		enc.Close()
		h.s(`" alt="`)
		h.text(b.Alt)
		h.s(`" width="` + strconv.Itoa(b.Image.Width) + `" height="` + strconv.Itoa(b.Image.Height) + `">`)
		if b.Alt != "" {
			h.s("<figcaption>")
			h.text(b.Alt)
			h.s("</figcaption>")
		}
		h.s("</figure>\n")
	case *PageBreak:
		h.s("<hr>\n")
	}
}

// htmlAlign is the style attribute of a table cell, by its column's Align.
var htmlAlign = [...]string{AlignLeft: ` style="text-align:left"`, AlignCenter: ` style="text-align:center"`, AlignRight: ` style="text-align:right"`}

func (h *htmlWriter) spans(spans []Span) {
	for _, s := range spans {
		if s.Break {
			h.s("<br>\n")
			continue
		}
		var open, closing []string
		wrap := func(o, c string) { open = append(open, o); closing = append([]string{c}, closing...) }
		if s.Link != "" && safeLink(s.Link) {
			wrap(`<a href="`+html.EscapeString(s.Link)+`">`, "</a>")
		}
		if s.Bold {
			wrap("<strong>", "</strong>")
		}
		if s.Italic {
			wrap("<em>", "</em>")
		}
		if s.Strike {
			wrap("<del>", "</del>")
		}
		if s.Code {
			wrap("<code>", "</code>")
		}
		h.s(strings.Join(open, ""))
		h.text(s.Text)
		h.s(strings.Join(closing, ""))
	}
}

// safeLink refuses link targets that would run code (javascript:, vbscript:,
// data:) in the page or open a local file (file:).
func safeLink(link string) bool {
	l := strings.ToLower(strings.TrimSpace(link))
	for _, bad := range []string{"javascript:", "vbscript:", "data:", "file:"} {
		if strings.HasPrefix(l, bad) {
			return false
		}
	}
	return true
}
