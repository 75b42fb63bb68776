package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentura/agentura/internal/tools/archtest"
)

// A layer is a part of the import diagram: the rules whose packages it
// holds, and how it draws them. Each rule belongs to the first layer one of
// whose patterns matches its Pkgs (archtest.Match); a rule in no layer, or
// a layer with no rule, is an error, so a rule added to archtest shows up
// in the diagram or says where it should go.
type layer struct {
	id    string   // Mermaid id of its box or node
	title string   // shown on the box or node
	pkgs  []string // patterns of the rules' Pkgs it holds
	// collapse draws the layer as one node naming its packages (below
	// the folder of its first pattern): an arrow from or to it is an arrow
	// from or to one of them.
	collapse bool
	// in is the layer whose box a collapsed layer is drawn in; "" draws it
	// on its own.
	in string
	// omit leaves the layer out of the diagram (tests and tools); the table
	// still has it.
	omit bool
}

// layers lay out docs/architecture.md's diagram: importers above, what they
// import below.
var layers = []layer{
	{id: "tests", omit: true, pkgs: []string{"internal/testkit/...", "internal/cmd/...", "internal/tools/...", "deploy/...", "agents/ocr/internal/ocrtest", "fileserve/s3bench"}},
	{id: "agents", title: "agents, their mains and their test helper", pkgs: []string{"agents/...", "cmd/ocr-agent", "cmd/composer-agent", "examples/...", "agentcore/agenttest"}},
	{id: "host", title: "host side", pkgs: []string{"transferclient", "client", "a2acall", "gateway", "contractcheck", "cmd/agentura"}},
	{id: "core", title: "agentcore", pkgs: []string{"agentcore"}},
	{id: "coreinternal", title: "agentcore/internal/", pkgs: []string{"agentcore/internal/..."}, collapse: true, in: "core"},
	{id: "server", title: "server side", pkgs: []string{"signing", "fileserve/...", "internal/lib/revocation", "internal/lib/filehttp", "cleanup"}},
	{id: "lib", title: "internal/lib/", pkgs: []string{"internal/lib/..."}, collapse: true},
	{id: "leaves", title: "leaves: both sides may import them", pkgs: archtest.Leaves},
}

// graph is the diagram before it is written: boxes of nodes, and arrows.
type graph struct {
	boxes  []box               // non-collapsed layers, in the order of layers
	single []node              // collapsed layers drawn on their own
	edges  map[string][]string // node id -> ids of nodes and boxes it may import
	order  []string            // the ids of edges' keys, in rule order
	nodeOf map[string]string   // a rule's Pkgs -> its node; absent: left out
	left   []string            // patterns of omitted layers that hold rules
	// collapsed are the titles of the nodes that stand for several packages.
	collapsed []string
}

// box is a layer drawn as a subgraph.
type box struct {
	id, title string
	nodes     []node
}

// node is one package, or a collapsed layer.
type node struct{ id, label string }

// nodeID is the Mermaid id of the node of a rule's Pkgs: letters and digits,
// with a prefix so that no id is a Mermaid keyword ("end") or starts an
// arrow's head ("o", "x").
func nodeID(pkgs string) string {
	return "p_" + strings.Trim(notIDChars.ReplaceAllString(strings.TrimSuffix(pkgs, "/..."), "_"), "_")
}

// notIDChars are the characters a Mermaid id is better without.
var notIDChars = regexp.MustCompile(`[^A-Za-z0-9]+`)

// buildGraph lays out rules on ls.
func buildGraph(rules []archtest.Rule, ls []layer) (*graph, error) {
	of := make([]int, len(rules)) // rule -> its layer
	used := make([]bool, len(ls))
	for i, r := range rules {
		of[i] = -1
		for j, l := range ls {
			if slices.ContainsFunc(l.pkgs, func(p string) bool { return archtest.Match(p, r.Pkgs) }) {
				of[i], used[j] = j, true
				break
			}
		}
		if of[i] < 0 {
			return nil, fmt.Errorf("the rule for %s is in no layer of the diagram; add it to one in internal/cmd/gendocs/diagram.go", r.Pkgs)
		}
	}
	for j, l := range ls {
		if !used[j] {
			return nil, fmt.Errorf("the diagram's layer %q holds no rule; remove it from internal/cmd/gendocs/diagram.go", l.id)
		}
	}

	// The node each rule is drawn as ("" when left out), and the boxes.
	g := &graph{edges: map[string][]string{}, nodeOf: map[string]string{}}
	nodeOf := make([]string, len(rules))
	boxOf := map[string]int{} // layer id -> index in g.boxes
	members := map[string][]string{}
	ids := map[string]string{}
	for _, l := range ls {
		if !l.omit && !l.collapse {
			boxOf[l.id] = len(g.boxes)
			g.boxes = append(g.boxes, box{id: l.id, title: l.title})
		}
	}
	for j, l := range ls {
		if l.omit {
			continue
		}
		if l.collapse {
			var names []string
			for i, r := range rules {
				if of[i] == j {
					nodeOf[i] = l.id
					names = append(names, strings.TrimSuffix(strings.TrimPrefix(r.Pkgs, strings.TrimSuffix(l.pkgs[0], "...")), "/..."))
				}
			}
			n := node{id: l.id, label: l.title + "<br>" + strings.Join(names, ", ")}
			g.collapsed = append(g.collapsed, l.title)
			if l.in == "" {
				g.single = append(g.single, n)
				continue
			}
			b, ok := boxOf[l.in]
			if !ok {
				return nil, fmt.Errorf("the diagram's layer %q is drawn in %q, which is no box", l.id, l.in)
			}
			g.boxes[b].nodes = append(g.boxes[b].nodes, n)
			members[l.in] = append(members[l.in], l.id)
			continue
		}
		for i, r := range rules {
			if of[i] != j {
				continue
			}
			id := nodeID(r.Pkgs)
			if other, dup := ids[id]; dup {
				return nil, fmt.Errorf("the rules for %s and %s would be one node %s of the diagram", other, r.Pkgs, id)
			}
			ids[id] = r.Pkgs
			nodeOf[i] = id
			b := boxOf[l.id]
			g.boxes[b].nodes = append(g.boxes[b].nodes, node{id: id, label: r.Pkgs})
			members[l.id] = append(members[l.id], id)
		}
	}

	for i, r := range rules {
		if nodeOf[i] != "" {
			g.nodeOf[r.Pkgs] = nodeOf[i]
		}
	}
	for _, l := range ls {
		for _, p := range l.pkgs {
			if l.omit && slices.ContainsFunc(rules, func(r archtest.Rule) bool { return archtest.Match(p, r.Pkgs) }) {
				g.left = append(g.left, p)
			}
		}
	}

	// Arrows: each allowed import to the node of the rule that covers it;
	// then the arrows from one node to every node of a box as one arrow to
	// the box, and the arrows from every node of a box to one node or box
	// as one arrow from the box.
	for i, r := range rules {
		from := nodeOf[i]
		if from == "" {
			continue
		}
		if _, seen := g.edges[from]; !seen {
			g.order = append(g.order, from)
			g.edges[from] = nil
		}
		for _, m := range r.May {
			targets := covering(rules, m)
			if len(targets) == 0 {
				return nil, fmt.Errorf("the rule for %s may import %s, which no rule covers", r.Pkgs, m)
			}
			for _, t := range targets {
				if to := nodeOf[t]; to != "" && to != from && !slices.Contains(g.edges[from], to) {
					g.edges[from] = append(g.edges[from], to)
				}
			}
		}
	}
	for _, from := range g.order {
		for _, b := range g.boxes {
			in := members[b.id]
			if len(in) < 2 || slices.Contains(in, from) {
				continue
			}
			to := g.edges[from]
			if slices.ContainsFunc(in, func(id string) bool { return !slices.Contains(to, id) }) {
				continue
			}
			at := slices.Index(to, in[0])
			to = slices.DeleteFunc(to, func(id string) bool { return slices.Contains(in, id) })
			g.edges[from] = slices.Insert(to, min(at, len(to)), b.id)
		}
	}
	for _, b := range g.boxes {
		in := members[b.id]
		if len(in) < 2 {
			continue
		}
		var common []string
		for _, to := range g.edges[in[0]] {
			if !slices.ContainsFunc(in, func(id string) bool { return !slices.Contains(g.edges[id], to) }) {
				common = append(common, to)
			}
		}
		if len(common) == 0 {
			continue
		}
		for _, id := range in {
			g.edges[id] = slices.DeleteFunc(g.edges[id], func(to string) bool { return slices.Contains(common, to) })
		}
		g.edges[b.id] = common
		g.order = slices.Insert(g.order, slices.Index(g.order, in[0]), b.id)
	}
	return g, nil
}

// covering returns the indexes of the rules whose packages the May entry m
// names: the rule whose Pkgs is m, the rules below a pattern m, and the
// rule of the package m (the first whose pattern matches it).
func covering(rules []archtest.Rule, m string) []int {
	var out []int
	for i, r := range rules {
		if r.Pkgs == m || archtest.Match(m, r.Pkgs) {
			out = append(out, i)
		}
	}
	pkg := strings.TrimSuffix(m, "/...")
	for i, r := range rules {
		if archtest.Match(r.Pkgs, pkg) {
			if !slices.Contains(out, i) {
				out = append(out, i)
			}
			break
		}
	}
	return out
}

// Mermaid writes g as a Mermaid flowchart in a fenced code block.
func (g *graph) Mermaid() string {
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart TD\n")
	for _, x := range g.boxes {
		fmt.Fprintf(&b, "  subgraph %s [\"%s\"]\n", x.id, label(x.title))
		for _, n := range x.nodes {
			fmt.Fprintf(&b, "    %s[\"%s\"]\n", n.id, label(n.label))
		}
		b.WriteString("  end\n")
	}
	for _, n := range g.single {
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", n.id, label(n.label))
	}
	for _, from := range g.order {
		for _, to := range g.edges[from] {
			fmt.Fprintf(&b, "  %s --> %s\n", from, to)
		}
	}
	b.WriteString("```\n")
	return b.String()
}

// Legend says how to read the diagram, and what it leaves out, in lines
// of at most about 118 characters like the rest of the page.
func (g *graph) Legend() string {
	s := "An arrow points from a package to one it may import. An arrow to a box stands for an arrow to each " +
		"package in it, an arrow from a box for an arrow from each package in it."
	if len(g.collapsed) > 0 {
		s += " A node that names several packages (`" + strings.Join(g.collapsed, "`, `") + "`) is drawn for them " +
			"together: an arrow from or to it is an arrow from or to one of them."
	}
	if len(g.left) > 0 {
		s += " Left out, as tests and tools (the table below has them): `" + strings.Join(g.left, "`, `") + "`."
	}
	return "\n" + wrap(s, 118)
}

// wrap breaks text into lines of at most about width characters.
func wrap(text string, width int) string {
	var b strings.Builder
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}

// label makes text safe between the quotes of a Mermaid label.
func label(text string) string { return strings.ReplaceAll(text, `"`, "#quot;") }

// diagramBlock is the generated diagram of docs/architecture.md with its
// marker lines.
var diagramBlock = regexp.MustCompile(`(?s)(<!-- diagram [^\n]*-->\n)(.*?)(<!-- end diagram -->)`)

// diagram replaces the import diagram of docs/architecture.md with the one
// internal/tools/archtest's rules make.
func diagram(old, _ string) (string, error) {
	if n := len(diagramBlock.FindAllStringIndex(old, -1)); n != 1 {
		return "", fmt.Errorf("want one import diagram (<!-- diagram ... --> … <!-- end diagram -->), found %d", n)
	}
	g, err := buildGraph(archtest.Rules, layers)
	if err != nil {
		return "", err
	}
	return diagramBlock.ReplaceAllStringFunc(old, func(m string) string {
		parts := diagramBlock.FindStringSubmatch(m)
		return parts[1] + g.Mermaid() + g.Legend() + parts[3]
	}), nil
}
