// Command fileagent runs the example agent: MCP on :8000/mcp, downloads on
// :8000/files/. Settings come from AGENT_* variables or their flags.
package main

import (
	"os"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/examples/fileagent"
	_ "github.com/agentura/agentura/fileserve/s3store" // s3:// in AGENT_STORAGE_URL
)

func main() {
	os.Exit(agentcore.Main(fileagent.Info, fileagent.DefaultAddr, os.Args[1:], fileagent.Register))
}
