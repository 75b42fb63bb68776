package agentcore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/internal/lib/fault"
)

// maxCallerError is the most bytes of an error text handed back to a
// caller (a model's context): an error echoing a 6 MB argument would
// otherwise flood it. The full text goes to the agent's log.
const maxCallerError = 4 << 10

// maxLoggedError bounds the same text in the log.
const maxLoggedError = 64 << 10

// callerError turns the error of a tool call into the error its caller sees:
// no path of the agent's own folders and no OS error string verbatim (a
// file error under them becomes what it means and what to do), at most
// maxCallerError bytes. The original goes to the call's log when it differs.
func (s *Service) callerError(call *Call, err error) error {
	msg := err.Error()
	out := msg
	if f, ok := errors.AsType[*fault.Fault](err); ok {
		// Told in words already; the details are for the log.
		call.Logger.Warn("tool call failed on the agent's side", "reason", f.Reason, "err", calls.Truncate(f.Err.Error(), maxLoggedError))
	} else if pe, ok := errors.AsType[*fs.PathError](err); ok && s.isPrivatePath(pe.Path) {
		out = fileErrorText(pe.Err, filepath.Base(pe.Path))
	} else if le, ok := errors.AsType[*os.LinkError](err); ok && (s.isPrivatePath(le.Old) || s.isPrivatePath(le.New)) {
		out = fileErrorText(le.Err, filepath.Base(le.New))
	} else if se, ok := errors.AsType[*os.SyscallError](err); ok {
		out = fileErrorText(se.Err, "")
	}
	for _, d := range s.privatePrefixes() {
		out = strings.ReplaceAll(out, d, "<agent folder>")
	}
	if len(out) > maxCallerError {
		out = strings.ToValidUTF8(out[:maxCallerError-200], "") +
			fmt.Sprintf("… (%d more bytes left out; the agent's log has the whole message)", len(out)-(maxCallerError-200))
	}
	if out != msg {
		call.Logger.Info("tool error shortened for the caller", "err", calls.Truncate(msg, maxLoggedError))
		return &callerFacingError{text: out, err: err}
	}
	return err
}

// callerFacingError is an error whose text was rewritten for the caller; it
// still wraps the original for errors.Is.
type callerFacingError struct {
	text string
	err  error
}

func (e *callerFacingError) Error() string { return e.text }
func (e *callerFacingError) Unwrap() error { return e.err }

// fileErrorText says what a file error under the agent's folders means.
func fileErrorText(err error, name string) string {
	what := "a file"
	if name != "" && name != "." && name != "/" {
		what = fmt.Sprintf("the file %q", calls.Truncate(name, 60))
	}
	switch {
	case errors.Is(err, syscall.ENAMETOOLONG):
		return fmt.Sprintf("cannot create %s: the name is too long for the agent's file system; give a shorter name (at most 200 bytes)", what)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "the agent's storage is full, so the call's files cannot be written; try again later, or ask the operator to free space"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "the agent is out of open-file slots; try again in a moment"
	}
	return fmt.Sprintf("the agent could not read or write %s (an internal file error); try again, and if it persists tell the operator: the agent's log has the details", what)
}

// isPrivatePath reports whether p lies in one of the agent's own folders
// (data, storage, call folders).
func (s *Service) isPrivatePath(p string) bool {
	abs, err := filepath.Abs(p)
	return p != "" && err == nil && slices.ContainsFunc(s.privatePrefixes(), func(d string) bool { return inside(abs, d) })
}

// privatePrefixes are the agent's own folders, absolute, longest first.
func (s *Service) privatePrefixes() []string {
	dirs := []string{s.cfg.DataDir, s.calls.Dir(), filepath.Dir(s.calls.Dir())}
	if d, err := s.cfg.storageDir(); err == nil {
		dirs = append(dirs, d)
	}
	var out []string
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil && abs != "/" {
			out = append(out, abs)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}
