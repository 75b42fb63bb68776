package agentcore

import (
	"slices"
	"strings"
	"testing"
)

// TestEverySettingHasAFlag ties Main's list of mirrored variables to what
// ConfigFromLookup reads: a setting added to one and not the other would
// silently lack its flag, or have a flag that sets nothing.
func TestEverySettingHasAFlag(t *testing.T) {
	var read []string
	ConfigFromLookup(func(name string) (string, bool) {
		if strings.HasPrefix(name, "AGENT_") && !slices.Contains(read, name) {
			read = append(read, name)
		}
		return "", false
	}, "t", ":8001")
	if len(read) == 0 {
		t.Fatal("ConfigFromLookup read no AGENT_ variable")
	}
	for _, name := range read {
		if !slices.Contains(envVars, name) {
			t.Errorf("ConfigFromLookup reads %s, but Main has no --%s flag for it: add it to envVars", name, FlagName(name))
		}
	}
	for _, name := range envVars {
		if !slices.Contains(read, name) {
			t.Errorf("Main has --%s for %s, which ConfigFromLookup never reads", FlagName(name), name)
		}
	}
}
