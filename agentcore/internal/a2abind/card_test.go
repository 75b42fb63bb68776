package a2abind

import (
	"slices"
	"testing"

	"github.com/agentura/agentura/agentcore/internal/calls"
)

// TestSkillOutputModes: a read-only tool may hand out files (the OCR
// agent's searchable PDF), so it keeps the default "*/*" the Tool doc
// promises; only an empty, non-nil OutputTypes says no files come out.
func TestSkillOutputModes(t *testing.T) {
	for _, tc := range []struct {
		name string
		def  calls.Tool
		any  bool
	}{
		{"default", calls.Tool{Name: "a"}, true},
		{"read-only", calls.Tool{Name: "b", ReadOnly: true}, true},
		{"no files out", calls.Tool{Name: "c", ReadOnly: true, OutputTypes: []string{}}, false},
		{"named types", calls.Tool{Name: "d", OutputTypes: []string{"application/pdf"}}, false},
	} {
		modes := skillOf(tc.def).OutputModes
		if slices.Contains(modes, "*/*") != tc.any {
			t.Errorf("%s: output modes %v; want */* %v", tc.name, modes, tc.any)
		}
	}
}
