package agentcore

import (
	"slices"
	"testing"
)

// TestSkillOutputModes: a read-only tool may hand out files (the OCR
// agent's searchable PDF), so it keeps the default "*/*" the Tool doc
// promises; only an empty, non-nil OutputTypes says no files come out.
func TestSkillOutputModes(t *testing.T) {
	for _, tc := range []struct {
		name string
		def  ToolDef
		any  bool
	}{
		{"default", ToolDef{Tool: Tool{Name: "a"}}, true},
		{"read-only", ToolDef{Tool: Tool{Name: "b", ReadOnly: true}}, true},
		{"no files out", ToolDef{Tool: Tool{Name: "c", ReadOnly: true, OutputTypes: []string{}}}, false},
		{"named types", ToolDef{Tool: Tool{Name: "d", OutputTypes: []string{"application/pdf"}}}, false},
	} {
		modes := skillOf(tc.def).OutputModes
		if slices.Contains(modes, "*/*") != tc.any {
			t.Errorf("%s: output modes %v; want */* %v", tc.name, modes, tc.any)
		}
	}
}
