package settings

import (
	"cmp"
	"regexp"
	"strings"
)

// Markdown returns l as a Markdown table with the columns variable, default
// and meaning, one row per variable, or per group of variables (Row,
// JoinRow): "| `AGENT_OUTPUT_TTL` / `AGENT_STAGING_TTL` | `24h` / `1h` | … |".
func (l List) Markdown() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for i := 0; i < len(l); {
		row := l[i : i+1]
		for i+len(row) < len(l) && l[i+len(row)].joinRow {
			row = l[i : i+len(row)+1]
		}
		i += len(row)
		var names, defaults []string
		shown := false
		for _, v := range row {
			names = append(names, "`"+v.Env+"`")
			d := v.DefaultDoc()
			defaults = append(defaults, d)
			shown = shown || d != ""
		}
		meaning := cmp.Or(row[0].rowDoc, row[0].Doc)
		def := " " // an empty cell is "| |"
		if shown {
			def = " " + strings.Join(defaults, " / ") + " "
		}
		b.WriteString("| " + strings.Join(names, " / ") + " |" + def + "| " + meaning + " |\n")
	}
	return b.String()
}

// link is a Markdown link: [text](target).
var link = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// Plain returns Markdown text as plain text, for flag help and comments:
// code marks dropped, links reduced to their text.
func Plain(markdown string) string {
	return strings.ReplaceAll(link.ReplaceAllString(markdown, "$1"), "`", "")
}
