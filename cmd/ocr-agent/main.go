// Command ocr-agent runs the OCR agent: MCP on :8001/mcp, downloads on
// :8001/files/. It needs tesseract (and pdftoppm for PDFs) in PATH. Settings
// come from AGENT_* variables or their flags, and AGENT_OCR_* variables or
// theirs (--ocr-max-pages, ...).
package main

import (
	"os"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/ocr"
	_ "github.com/agentura/agentura/fileserve/s3store" // s3:// in AGENT_STORAGE_URL
)

func main() {
	var cfg ocr.Config // filled by Main from AGENT_OCR_* and their flags before register runs
	os.Exit(agentcore.Main(ocr.Info, ocr.DefaultAddr, os.Args[1:],
		func(svc *agentcore.Service) error { return ocr.New(cfg).Register(svc) },
		agentcore.WithSettings(cfg.Settings()...)))
}
