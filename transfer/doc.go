// Package transfer is the file-transfer protocol of agentura as both sides
// speak it: the JSON shapes agents send and hosts read, the names they agree
// on (schema keywords, _meta keys, paths, A2A keys), and the moves of a file
// between a host and an agent — the upload to /uploads, the guarded download
// of a produced file (origin rule, size cap, no clobbering on disk), data
// URIs, the one same-origin rule and the transport that sends a bearer token
// to that origin only, redaction of URLs for logs and errors, and the
// readiness probe.
//
// It is a leaf: it imports the standard library and the leaf package
// filename only, never the go-sdk, a2a-go, fileserve or agentcore, so
// that the client package, the agentura CLI, the A2A client (a2acall) and the
// agents themselves can all use it.
package transfer
