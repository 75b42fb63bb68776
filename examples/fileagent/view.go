package fileagent

import (
	_ "embed"

	"github.com/agentura/agentura/agentcore"
)

// InspectViewURI is the view inspect_file's results are shown in by hosts
// that support MCP Apps: an author's own view, beside the file view every
// tool that hands out files gets without a line.
const InspectViewURI = "ui://fileagent/inspect"

//go:embed inspect_view.js
var inspectScript string

// inspectView is the view: a card with the file's name, type, size and
// digest, built on agentura's view kit (agentcore.ViewPage), so the
// handshake with the host, its theme and the view's size come for free.
func inspectView() agentcore.View {
	return agentcore.View{
		URI: InspectViewURI, Name: "fileagent-inspect", Title: "Inspected file",
		Description: "A file's name, type, size and SHA-256, as inspect_file found them.",
		HTML: agentcore.ViewPage("Inspected file", `<div class="card" id="card"><p class="muted">Waiting for the result…</p></div>`,
			`.card { border: 1px solid var(--line); border-radius: var(--radius); padding: 12px 14px; }
.card h1 { font-size: 16px; margin: 0 0 4px; overflow-wrap: anywhere; }
.card dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 8px 0 0; }
.card dt { color: var(--fg2); }
.card dd { margin: 0; }`,
			inspectScript),
	}
}
