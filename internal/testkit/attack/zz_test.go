package attack

import "testing"

// TestZZStopAgents runs after every other test of the package (tests run
// in the order of their files' names): it stops the agents gracefully,
// which also shows that none crashed under the attacks.
func TestZZStopAgents(t *testing.T) { stopAgents(t) }
