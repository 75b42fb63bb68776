package composer

import (
	"bufio"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// writeMarkdown renders d back as Markdown (GitHub flavour), with each
// picture referred to as images/<FileName>: the caller ships the pictures as
// files of their own beside the page.
func (d *Document) writeMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m := &mdWriter{w: bw}
	if d.ShowTitle {
		m.w.WriteString("# " + mdEscape(d.Title) + "\n\n")
	}
	m.blocks(d.Blocks, "")
	return bw.Flush()
}

// mdWriter writes Markdown; write errors surface at Flush.
type mdWriter struct{ w *bufio.Writer }

// blocks writes blocks, each line prefixed with indent (list nesting, quotes).
func (m *mdWriter) blocks(blocks []Block, indent string) {
	for i, b := range blocks {
		if i > 0 {
			m.w.WriteString(strings.TrimRight(indent, " ") + "\n")
		}
		m.block(b, indent)
	}
}

func (m *mdWriter) line(indent, s string) {
	m.w.WriteString(indent + s + "\n")
}

func (m *mdWriter) block(b Block, indent string) {
	switch b := b.(type) {
	case *Heading:
		m.line(indent, strings.Repeat("#", min(max(b.Level, 1), 6))+" "+mdSpans(b.Spans, false))
	case *Paragraph:
		for _, l := range strings.Split(mdSpans(b.Spans, false), "\n") {
			m.line(indent, l)
		}
	case *List:
		for i, it := range b.Items {
			marker := "- "
			if b.Ordered {
				marker = strconv.Itoa(b.Start+i) + ". "
			}
			marker += map[string]string{"todo": "[ ] ", "done": "[x] "}[it.Task]
			pad := strings.Repeat(" ", len(marker))
			var sub strings.Builder
			inner := &mdWriter{w: bufio.NewWriter(&sub)}
			inner.blocks(it.Blocks, "")
			inner.w.Flush()
			lines := strings.Split(strings.TrimRight(sub.String(), "\n"), "\n")
			for j, l := range lines {
				switch {
				case j == 0:
					m.line(indent, marker+l)
				case l == "":
					m.line("", "")
				default:
					m.line(indent+pad, l)
				}
			}
		}
	case *Table:
		cells := func(row [][]Span) string {
			parts := make([]string, len(row))
			for i, c := range row {
				parts[i] = mdSpans(c, true)
			}
			return "| " + strings.Join(parts, " | ") + " |"
		}
		m.line(indent, cells(b.Header))
		seps := make([]string, len(b.Align))
		for i, a := range b.Align {
			seps[i] = map[Align]string{AlignNone: "---", AlignLeft: ":---", AlignCenter: ":---:", AlignRight: "---:"}[a]
		}
		m.line(indent, "| "+strings.Join(seps, " | ")+" |")
		for _, row := range b.Rows {
			m.line(indent, cells(row))
		}
	case *CodeBlock:
		fence := "```"
		for strings.Contains(b.Text, fence) {
			fence += "`"
		}
		m.line(indent, fence+b.Lang)
		for _, l := range strings.Split(b.Text, "\n") {
			m.line(indent, l)
		}
		m.line(indent, fence)
	case *Quote:
		m.blocks(b.Blocks, indent+"> ")
	case *Figure:
		m.line(indent, "!["+mdEscape(b.Alt)+"](images/"+(&url.URL{Path: b.Image.FileName}).EscapedPath()+")")
	case *PageBreak:
		m.line(indent, "---")
	}
}

// mdSpans writes spans as Markdown inline text.
func mdSpans(spans []Span, inTable bool) string {
	var b strings.Builder
	for _, s := range spans {
		if s.Break {
			if inTable {
				b.WriteString("<br>")
			} else {
				b.WriteString("\\\n")
			}
			continue
		}
		t := s.Text
		if s.Code {
			tick := "`"
			for strings.Contains(t, tick) {
				tick += "`"
			}
			pad := ""
			if strings.HasPrefix(t, "`") || strings.HasSuffix(t, "`") {
				pad = " "
			}
			t = tick + pad + t + pad + tick
		} else {
			t = mdEscape(t)
		}
		if inTable {
			t = strings.ReplaceAll(t, "|", `\|`)
		}
		// Emphasis markers must hug the text: move surrounding spaces out.
		lead := t[:len(t)-len(strings.TrimLeft(t, " "))]
		trail := t[len(strings.TrimRight(t, " ")):]
		core := strings.TrimSpace(t)
		if core == "" {
			b.WriteString(t)
			continue
		}
		if s.Strike {
			core = "~~" + core + "~~"
		}
		if s.Italic {
			core = "*" + core + "*"
		}
		if s.Bold {
			core = "**" + core + "**"
		}
		if s.Link != "" {
			core = "[" + core + "](<" + strings.NewReplacer("<", "%3C", ">", "%3E").Replace(s.Link) + ">)"
		}
		b.WriteString(lead + core + trail)
	}
	return b.String()
}

// mdEscape escapes the characters that would start Markdown syntax.
func mdEscape(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case '\\', '*', '_', '`', '[', ']', '<', '>', '~', '!':
			b.WriteByte('\\')
		case '#', '-', '+':
			if i == 0 {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
	}
	out := b.String()
	// "1. text" at the start would become a list.
	if j := strings.IndexFunc(out, func(r rune) bool { return r < '0' || r > '9' }); j > 0 && (out[j] == '.' || out[j] == ')') {
		out = out[:j] + `\` + out[j:]
	}
	return out
}
