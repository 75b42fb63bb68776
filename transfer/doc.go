// Package transfer is the file-transfer protocol of agentura as both sides
// must agree on it: the JSON shapes agents send and hosts read (File,
// Upload, Error …), the names (schema keywords, _meta keys, paths, headers,
// A2A keys), the one same-origin rule, SHA-256 checking of a stream, data
// URIs, and redaction of URLs for logs and errors. It holds no HTTP client:
// the host side's uploads, guarded downloads and saving are in package
// transferclient, as a2a-go keeps a2a's types apart from a2aclient.
//
// It is a leaf: it imports the standard library and transfer/mcpfile
// only, never the go-sdk, a2a-go, fileserve or agentcore,
// so that both the server side (agentcore, fileserve, internal/lib/filehttp)
// and the host side (client, gateway, a2acall, the agentura CLI) use it.
package transfer
