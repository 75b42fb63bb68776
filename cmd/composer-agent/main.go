// Command composer-agent runs the composer agent: Markdown in; PDF, DOCX,
// PPTX, HTML or Markdown out; PDFs merged. MCP on :8002/mcp, downloads on
// :8002/files/. Settings come from AGENT_* variables or their flags, and
// AGENT_FONT_DIRS or --font-dirs.
package main

import (
	"os"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/composer"
	_ "github.com/agentura/agentura/fileserve/s3store" // s3:// in AGENT_STORAGE_URL
)

func main() {
	var cfg composer.Config // filled by Main from AGENT_FONT_DIRS and its flag before register runs
	os.Exit(agentcore.Main(composer.Info, composer.DefaultAddr, os.Args[1:],
		func(svc *agentcore.Service) error { return composer.RegisterConfig(svc, cfg, composer.DefaultLimits()) },
		agentcore.WithSettings(cfg.Settings()...)))
}
