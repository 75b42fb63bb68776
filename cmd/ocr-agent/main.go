// Command ocr-agent runs the OCR agent: MCP on :8001/mcp, downloads on
// :8001/files/. It needs tesseract (and pdftoppm for PDFs) in PATH. Settings
// come from AGENT_* variables or their flags, and AGENT_OCR_* variables.
package main

import (
	"os"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/agents/ocr"
	_ "github.com/agentura/agentura/fileserve/s3store" // s3:// in AGENT_STORAGE_URL
)

func main() {
	os.Exit(agentcore.Main(ocr.Info, ocr.DefaultAddr, os.Args[1:], ocr.Register))
}
