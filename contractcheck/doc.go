// Package contractcheck drives any MCP server, written in any language, and
// reports point by point what of agentura's file contract (docs/contract.md)
// it meets: file parameters marked with x-file or x-mcp-file (and the
// draft's x-mcp-file object well formed), a file sent inline as a data: URI
// and by URL resolved, produced files announced with download_url,
// filename, mime_type, size_bytes and sha256 and linked by resource_link,
// their URLs downloading the announced bytes with the contract's headers, a
// tampered or missing token refused, and the file-transfer draft's methods
// (files/authorizeUpload, files/authorizeDownload) if offered.
//
// It needs a tool to call: it takes the tools with a file parameter, sends
// each (up to three, or the one named) a small file it generates of a type
// the parameter's schema or description accepts (PNG, JPEG, PDF, CSV, JSON,
// Markdown, HTML or text), with the other required arguments made up from
// the schema, and keeps the first that answers, preferring one that
// produces a file. A file and arguments of one's own can be given.
//
// It is meant for servers one does not trust yet, so it goes where
// agentura's hosts go and nowhere else: a URL the server names — a
// download_url, a descriptor of the draft, a redirect, one of its MCP
// endpoint included — is fetched (or sent to) only on the server's origin or
// on a host of Options.AllowHosts, under transferclient.Guard, the rule of
// the client package and the gateway (Guard.Get for downloads, Guard.Client
// for every other request). A URL elsewhere is not fetched: the point that
// needed it says so, naming the host and the setting that allows it, and
// fails where the contract wants the file served by the server (download,
// output-links, file-transfer); the token point, which then has nothing of
// the server's to probe, is skipped.
//
// With Options.Standard it judges the server by the draft MCP file
// contract alone instead, SEP-2631 at modelcontextprotocol commit c3cf0eba
// (StandardRevision, standard.go), each point naming its section: the
// x-mcp-file declarations, files sent inline and uploaded by descriptor as
// their transferModes allow, FileValues in results and file content blocks
// resolved with files/authorizeDownload, sizes and digests verified,
// expired descriptors and unknown file URIs refused — never /uploads nor a
// URL for the server to fetch. Either way it declares the draft's client
// capability files (§2), and reads results whose content blocks the go-sdk
// cannot decode (the §8 file block) through the client package's
// rewriting, which keeps each block as sent.
//
// It is a host: it imports the client package (to find file parameters and
// put the file where the schema wants it) and the leaves, never a server
// package. `agentura check` is its command line.
package contractcheck
