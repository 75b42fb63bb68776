package agentcore

import "github.com/agentura/agentura/agentcore/internal/transport"

// InputFile is a resolved file input: a local file the tool may read until
// its call ends, when the per-call folder holding it is removed.
type InputFile struct {
	// Path is the local file. Its base name is Name.
	Path string
	// Name is the sanitised original name ("invoice.pdf").
	Name string
	// MIMEType is detected from the content and the name.
	MIMEType string
	// Size is the length in bytes.
	Size int64
}

// ResolveError is the error of a file input that could not be resolved:
// its Name, and Err, which says what was wrong and what to do about it.
type ResolveError = transport.ResolveError

// Errors a resolution may wrap; test with errors.Is.
var (
	// ErrUnresolvedReference: the content is a bare file name — the client
	// did not replace its file reference with the file.
	ErrUnresolvedReference = transport.ErrUnresolvedReference
	// ErrInputTooLarge: the input exceeds AGENT_MAX_UPLOAD_BYTES.
	ErrInputTooLarge = transport.ErrInputTooLarge
	// ErrPathInputsDisabled: a path was given but AGENT_INPUT_ROOTS is empty.
	ErrPathInputsDisabled = transport.ErrPathInputsDisabled
	// ErrOutsideRoots: a path lies outside every input root.
	ErrOutsideRoots = transport.ErrOutsideRoots
)

// SanitizeName returns a safe base name for a file a caller named: folders
// are dropped (both / and \ separate them), control and invisible formatting
// characters removed, "." and ".." refused, the length capped with the
// extension kept. It returns "" when nothing usable remains. Inputs and
// outputs are named by the same rules.
func SanitizeName(name string) string { return transport.SanitizeName(name) }
