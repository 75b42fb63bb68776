// Package transferclient moves files between a host and an agent, on the
// protocol package transfer names: the upload to /uploads (SendUpload) and
// the resumable one (Tus), the guarded download of a produced file (Guard:
// the origin rule and a size cap; Guard.Client applies the rule to any other
// request to a URL an agent named), saving it whole or not at all and never
// over another file (Save), deleting a file and revoking one URL, and the
// transport that sends a bearer token to the agent's origin only.
//
// It is the host side's machinery, as a2aclient is to a2a in a2a-go: the
// client package, gateway, a2acall, contractcheck and the agentura CLI use
// it; the server side (agentcore, fileserve, internal/lib/filehttp) never does
// and imports transfer alone. It imports the standard library and the
// leaves transfer and filename only.
package transferclient
