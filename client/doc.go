// Package client is the host side of agentura: middleware for Go MCP hosts
// built on the go-sdk client (github.com/modelcontextprotocol/go-sdk/mcp) that
// lets a language model work with file names while the bytes move beside it.
//
// A host keeps a [Registry] per session: the files the user attached and the
// files tools produced, each kept on disk under its name. [Middleware] wraps
// the go-sdk client's sending side:
//
//   - Before tools/call it walks the tool's input schema for fields marked
//     "x-file" (or "x-mcp-file") and replaces each registry name the model
//     wrote there with the file: a data URI up to [Config.InlineMaxBytes], or
//     the signed URL of an upload to the agent's /uploads above it. A name
//     the registry does not hold stops the call, with an error naming the
//     files it does hold.
//   - After tools/call it fetches each produced file (download_url in the
//     structured content, resource_link blocks, embedded resources) from the
//     agent's own origin or an allowed host, registers it, and rewrites the
//     result so that the model reads "Tool produced: report.pptx
//     (PowerPoint, 1.0 MB)" and never a URL or a byte of content.
//
// [LimitMessages] caps each JSON-RPC message a server sends on the host's
// transport (a JSON body, an SSE event, a stdio line; 32 MiB by default):
// an answer over the cap fails its request with an error naming the
// server, instead of taking the host's memory.
//
// The package shares no server internals: it knows the agents only through
// the leaf packages transfer (the protocol: JSON shapes, names, the origin
// rule, uploads and guarded downloads), filetype (names of types) and
// filename (display names).
package client
