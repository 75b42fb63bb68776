// Package fault turns a failure of the agent's own (its store, its disk,
// its network to the store) into what a caller is told: the cause in words
// and a reason code it can tell apart, while the details, which may name
// paths, keys, buckets and addresses, go to the log alone. One rule for
// every JSON-RPC and HTTP answer of the server side.
package fault

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// Reasons a Fault gives.
const (
	// StorageFull: the store's disk (or quota of the volume) is full.
	StorageFull = "storage_full"
	// StorageUnavailable: the store did not answer, or could not be reached.
	StorageUnavailable = "storage_unavailable"
	// StorageReadOnly: the store refuses writes (permissions, a read-only mount).
	StorageReadOnly = "storage_read_only"
	// IdentityProviderUnavailable: the identity provider of AGENT_AUTH=oauth
	// could not be read (its metadata, keys or introspection endpoint), so a
	// bearer token could not be checked: not refused, to be sent again.
	IdentityProviderUnavailable = "identity_provider_unavailable"
	// Internal: anything else of the agent's own.
	Internal = "internal"
)

// A Fault is a failure of the agent's own as its caller sees it: Error is
// the cause in words, Reason its code; Unwrap gives the details for the log.
type Fault struct {
	Reason string
	Words  string
	Err    error
}

// Error is what the caller reads: no path, key or address.
func (f *Fault) Error() string { return f.Words }

// Unwrap gives the cause, for the log and errors.Is.
func (f *Fault) Unwrap() error { return f.Err }

// Of is err, met while doing what ("read the task"), as a Fault: its cause
// told in words with what to do, its reason code set. An error that is a
// Fault already is returned as it is.
func Of(what string, err error) *Fault {
	if f, ok := errors.AsType[*Fault](err); ok {
		return f
	}
	reason, words := Classify(err)
	return &Fault{Reason: reason, Words: fmt.Sprintf("could not %s: %s", what, words), Err: err}
}

// Classify says what kind of failure err is: its reason code, and the
// cause in words with what to do, naming nothing of the server's.
func Classify(err error) (reason, words string) {
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return StorageFull, "the agent's storage is full; try again later, or ask the operator to free space (the agent's log names it)"
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return StorageReadOnly, "the agent's storage is not writable; tell the operator (the agent's log names the volume)"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr), errors.Is(err, syscall.ECONNREFUSED):
		return StorageUnavailable, "the agent's storage did not answer; try again shortly (the agent's log has the error)"
	}
	return Internal, "the agent failed (an internal error); try again, and if it persists tell the operator: the agent's log has the details"
}
