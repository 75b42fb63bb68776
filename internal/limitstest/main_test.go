// Package limitstest checks the limits of a built agent process (the test
// agent of internal/testagent): bounded tool calls, per-owner quotas and
// rate limits, slow bodies, and its peak memory with inline files.
package limitstest

import (
	"os"
	"testing"

	"github.com/agentura/agentura/internal/mcptest"
)

// agentBin is the test agent, built once by TestMain (with -race when the
// tests run with it, so a data race in the agent fails its stop check).
var agentBin string

func TestMain(m *testing.M) {
	os.Exit(mcptest.Main(m, "limitstest", func(dir string) (err error) {
		agentBin, err = mcptest.Build(dir, "github.com/agentura/agentura/internal/testagent/cmd/testagent", mcptest.RaceEnabled())
		return err
	}))
}
