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
// sent; so is a data: URI or URL the model wrote in place of a name, unless
// Config.AllowFileURIs. Every file the tool produced is fetched
// (transferclient.Guard: the agent's origin or an allowed host, capped),
// registered, and saved under its registry name in a folder of the run under
// Out (out.go), without overwriting anything; the host gets the tool's text,
// "Tool produced: report.pdf (PDF, 40 KB) — saved as
// /home/me/agentura-files/2026-12-02_101503/report.pdf" (absolute) and a
// resource_link to the saved copy (file://), never bytes, data URIs, signed
// URLs or the agents' owner handles.
//
// The gateway starts with the agents it reaches, tries the others in the
// background, reconnects when a session is lost, and tries an idempotent
// step once more: tools/list, a download, and a tools/call that provably
// never reached the agent (reconnect.go). A tool of an agent that is away is
// a tool error.
//
// Progress, log messages, tool-list changes and cancellation pass between
// host and agents; the gateway's own transfers report progress too.
//
// The package knows agents only as MCP servers: it imports client,
// transfer, filetype and the go-sdk, never a server package.
package gateway
