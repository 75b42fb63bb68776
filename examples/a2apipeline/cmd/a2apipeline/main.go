// Command a2apipeline runs the pipeline example agent: MCP at :8003/mcp,
// A2A at :8003/a2a. PIPELINE_AGENT_URL and PIPELINE_SKILL name the skill of
// another agent that its tool forward_files calls over A2A
// (PIPELINE_AGENT_TOKEN: a bearer token for it; PIPELINE_OAUTH_ISSUER,
// PIPELINE_OAUTH_CLIENT_ID and PIPELINE_OAUTH_CLIENT_SECRET: client
// credentials for one with AGENT_AUTH=oauth); AGENT_* settings as for every
// agent (docs/a2a.md).
package main

import (
	"os"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/examples/a2apipeline"
	_ "github.com/agentura/agentura/fileserve/s3store" // s3:// in AGENT_STORAGE_URL
)

func main() {
	os.Exit(agentcore.Main(a2apipeline.Info, a2apipeline.DefaultAddr, os.Args[1:], func(svc *agentcore.Service) error {
		target, err := a2apipeline.TargetFromEnv()
		if err != nil {
			return err
		}
		return a2apipeline.Register(svc, target)
	}))
}
