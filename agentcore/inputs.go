package agentcore

import "github.com/agentura/agentura/agentcore/internal/transport"

// InputFile is a resolved file input, readable until its call ends.
type InputFile struct {
	Path     string // the local file; its base name is Name
	Name     string // the sanitised original name ("invoice.pdf")
	MIMEType string // detected from the content and the name
	Size     int64  // length in bytes
}

// ResolveError is a file input's error: its Name, and Err saying what to do.
type ResolveError = transport.ResolveError

// Errors a resolution may wrap; test with errors.Is.
var (
	ErrUnresolvedReference = transport.ErrUnresolvedReference // a bare file name: the client did not send the file
	ErrInputTooLarge       = transport.ErrInputTooLarge       // over AGENT_MAX_UPLOAD_BYTES
	ErrPathInputsDisabled  = transport.ErrPathInputsDisabled  // a path, but AGENT_INPUT_ROOTS is empty
	ErrOutsideRoots        = transport.ErrOutsideRoots        // a path outside every input root
)

// SanitizeName returns the safe base name a named file gets, or "" if none.
func SanitizeName(name string) string { return transport.SanitizeName(name) }
