// Package mcptest is the end-to-end test harness for agentura agents: it
// builds an agent binary, runs it on a free loopback port with its log
// captured, waits for /readyz, connects an independent MCP client
// (mark3labs/mcp-go) pinned to protocol 2025-11-25, calls tools, picks out
// the files a result names, downloads their signed URLs, and stops the agent
// with SIGTERM, checking that it exits with status 0.
//
// Everything is real: the binary, the port, the client and HTTP. Each
// helper fails the test with a message that says what went wrong.
package mcptest
