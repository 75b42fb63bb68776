// Package limitstest checks the limits of a built agent process (the test
// agent of internal/testkit/testagent): bounded tool calls, per-owner quotas and
// rate limits, slow bodies, and its peak memory with inline files.
package limitstest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// agentBin is the test agent, built once by TestMain (with -race when the
// tests run with it, so a data race in the agent fails its stop check);
// plainBin is the same agent without -race, whose memory the peak-RSS test
// measures (the race detector multiplies it), whatever the tests run with.
var agentBin, plainBin string

const testAgentPkg = "github.com/agentura/agentura/internal/testkit/testagent/cmd/testagent"

func TestMain(m *testing.M) {
	os.Exit(mcptest.Main(m, "limitstest", func(dir string) error {
		if !mcptest.RaceEnabled() {
			var err error
			agentBin, err = mcptest.Build(dir, testAgentPkg, false)
			plainBin = agentBin
			return err
		}
		// Under -race, the race-built agent and the plain one (whose memory
		// is measured) build side by side: two go builds, one each core.
		plainDir := filepath.Join(dir, "plain")
		if err := os.Mkdir(plainDir, 0o755); err != nil {
			return err
		}
		var plainErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			plainBin, plainErr = mcptest.Build(plainDir, testAgentPkg, false)
		}()
		var err error
		agentBin, err = mcptest.Build(dir, testAgentPkg, true)
		<-done
		return errors.Join(err, plainErr)
	}))
}
