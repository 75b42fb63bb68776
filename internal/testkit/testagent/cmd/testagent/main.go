// Command testagent serves the test agent's tools (internal/testkit/testagent) as a
// binary, for tests that measure the agent process itself: its peak memory,
// its limits under load. Settings come from AGENT_* variables.
package main

import (
	"os"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/internal/testkit/testagent"
)

func main() {
	os.Exit(agentcore.Main(agentcore.Info{Name: "testagent", Version: "0.1.0"}, ":8099", os.Args[1:], testagent.Register))
}
