package agentcore

import (
	"errors"

	"github.com/agentura/agentura/agentcore/internal/ops"
	"github.com/agentura/agentura/agentcore/internal/transport"
)

// InputFile is a resolved file input, readable until its call ends.
type InputFile struct {
	Path     string // the local file; its base name is Name
	Name     string // the sanitised original name ("invoice.pdf")
	MIMEType string // detected from the content and the name
	Size     int64  // length in bytes
}

// ResolveError is a file input's error: its Name, and Err saying what to do.
type ResolveError = transport.ResolveError

// Errors a call may wrap (test with errors.Is): a file input's, or Invoke's.
var (
	ErrUnresolvedReference = transport.ErrUnresolvedReference                                   // a bare file name: the client did not send the file
	ErrInputTooLarge       = transport.ErrInputTooLarge                                         // over AGENT_MAX_UPLOAD_BYTES
	ErrPathInputsDisabled  = transport.ErrPathInputsDisabled                                    // a path, but AGENT_INPUT_ROOTS is empty
	ErrOutsideRoots        = transport.ErrOutsideRoots                                          // a path outside every input root
	ErrCallInputsTooLarge  = errors.New("the call's file inputs exceed their total size limit") // over AGENT_MAX_CALL_INPUT_BYTES
	ErrUnknownTool         = errors.New("unknown tool")                                         // no tool of that name is registered
	ErrBusy                = ops.ErrBusy                                                        // no call slot freed up within AGENT_QUEUE_TIMEOUT
)

// SanitizeName returns the safe base name a named file gets, or "" if none.
func SanitizeName(name string) string { return transport.SanitizeName(name) }
