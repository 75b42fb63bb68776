// Package gateway is the host side of agentura's file specification as an
// MCP server of its own: one local process that any MCP host (Claude
// Desktop, VS Code, Goose, ...) starts like a stdio server, and that fronts
// one or more MCP agents for it.
//
// The host sees the agents' tools (a name two agents share becomes
// "<agent>_<tool>") with every file position of their input schemas shown
// as a string, or a list of strings: a file name from the conversation or a
// path under the gateway's roots ([client.HostSchema]). On a call the
// gateway resolves each name — a file of its registry (produced earlier, or
// added with its add_file tool), else a path relative to a root, else an
// absolute path under a root; symlinks cannot leave a root (os.Root) — and
// sends the file as the client package sends it: inline under the
// threshold, through the agent's /uploads above. A name it cannot resolve
// is a tool error naming the file and listing the known ones; nothing is
// sent. Every file the tool produced is fetched (transfer.Guard: the agent's
// origin or an allowed host, capped), saved in Out without overwriting
// anything (transfer.Save) and registered; the host gets the tool's text,
// "Tool produced: report.pdf (PDF, 40 KB) — saved as agentura-files/report.pdf"
// and a resource_link to the saved copy (file://), never bytes, data URIs
// or signed URLs.
//
// Progress, log messages, tool-list changes and cancellation pass between
// host and agents; the gateway's own transfers report progress too.
//
// The package knows agents only as MCP servers: it imports client,
// transfer, filetype and the go-sdk, never a server package.
package gateway
