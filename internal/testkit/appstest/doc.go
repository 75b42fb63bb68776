// Package appstest holds the tests of agentura's MCP Apps views in a real
// browser: a test host, written here, that implements the host side of the
// extension io.modelcontextprotocol/ui (2026-01-26) — a sandboxed iframe
// whose CSP is built from the view's _meta.ui.csp, the ui/initialize
// handshake, the tool-input and tool-result notifications, tools/call and
// resources/read from the view forwarded to the agent, ui/open-link,
// ui/update-model-context and ui/message — run in headless Chromium driven
// with chromedp. The package has tests only.
package appstest
