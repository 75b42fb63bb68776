package agentcore

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/ops"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/filehttp"
)

// AnonymousOwner owns every file when AGENT_AUTH is none: one tenant.
const AnonymousOwner = filehttp.AnonymousOwner

// Call is one invocation of a tool. It knows who called (Owner), gives the
// tool a private folder (WorkDir) and resolves file inputs and stores file
// outputs on the caller's behalf. Everything in its folder is removed when
// the call ends, however it ends.
type Call struct {
	// Tool is the name of the tool called.
	Tool string
	// Owner is the caller's identity: the `sub` of its verified bearer token,
	// or AnonymousOwner without authentication. Files are scoped to it.
	Owner string
	// Logger logs with the call's tool and request id.
	Logger *slog.Logger

	svc      *Service
	hooks    *calls.Hooks  // what the transport lets the call send back (progress.go)
	progress progressState // rate limit of Progress
	dir      string
	mkdir    sync.Once
	mkdirOK  error

	inputs    callInputs
	meter     *ops.WorkMeter // the work folder against the quota; nil without one
	logMu     sync.Mutex
	logInputs []string // "name (size)" of each input resolved, for the call's log line
}

func (s *Service) newCall(tool, owner, requestID string) *Call {
	logger := s.log.With("tool", tool)
	if requestID != "" {
		logger = logger.With("request_id", requestID)
	}
	return &Call{
		Tool:   tool,
		Owner:  owner,
		Logger: logger,
		svc:    s,
		hooks:  &calls.Hooks{},
		dir:    filepath.Join(s.calls.Dir(), fileserve.NewID()),
	}
}

// WorkDir returns the call's private folder, creating it on first use. Files
// written here and handed out with FileResponse are moved into the store, not
// copied. The folder is removed when the call ends.
func (c *Call) WorkDir() (string, error) {
	c.mkdir.Do(func() { c.mkdirOK = os.MkdirAll(filepath.Join(c.dir, "work"), 0o700) })
	return filepath.Join(c.dir, "work"), c.mkdirOK
}

// ResolveFileAttachment makes a file parameter a local file: data URI, URL
// (this agent's own signed URLs are read locally; others are fetched behind
// the SSRF guard), path under an input root, or base64. The result's base
// name is the sanitised original name. A bare file name as content is an
// unresolved reference and fails with an error wrapping
// ErrUnresolvedReference.
func (c *Call) ResolveFileAttachment(ctx context.Context, f FileAttachment) (*InputFile, error) {
	return c.ResolveFile(ctx, f.Name, f.Content)
}

// ResolveFile resolves a file given as a name and a content string, as
// ResolveFileAttachment does; use it for FileContent fields of structured
// parameters, passing the item's name: call.ResolveFile(ctx, item.Name,
// string(item.Content)). An empty content falls back to nothing: it is an
// unresolved reference, since the client should have filled it.
//
// Within one call each distinct input (the same name and content) is
// resolved once, and all inputs together may hold at most
// AGENT_MAX_CALL_INPUT_BYTES: beyond it the input fails with an error
// wrapping ErrCallInputsTooLarge.
func (c *Call) ResolveFile(ctx context.Context, name, content string) (*InputFile, error) {
	f, err := c.inputs.resolve(name, content, c.svc.cfg.MaxCallInputBytes, func() (*InputFile, error) {
		in, err := c.svc.resolver.Resolve(ctx, c.Owner, filepath.Join(c.dir, "in"), name, content)
		if err != nil {
			return nil, err
		}
		return (*InputFile)(in), nil
	})
	if err == nil {
		c.noteInput(f)
	}
	return f, err
}

// noteInput remembers a resolved input for the call's log line.
func (c *Call) noteInput(f *InputFile) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	c.logInputs = append(c.logInputs, fmt.Sprintf("%s (%d B)", f.Name, f.Size))
}

// logDone logs the call once, when it has ended: who called, how long it
// took, the files it read and handed out, and its error.
func (c *Call) logDone(took time.Duration, res *Result, err error) {
	c.logMu.Lock()
	inputs := slices.Clone(c.logInputs)
	c.logMu.Unlock()
	var outputs []string
	if res != nil {
		for _, f := range res.Files {
			outputs = append(outputs, fmt.Sprintf("%s (%d B)", f.Filename, f.SizeBytes))
		}
	}
	attrs := []any{"owner", c.Owner, "duration", took.Round(time.Microsecond), "inputs", inputs, "outputs", outputs}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	}
	c.Logger.Info("tool call", attrs...)
}

// end removes the call's folder.
func (c *Call) end() {
	if err := os.RemoveAll(c.dir); err != nil {
		c.Logger.Warn("could not remove call folder", "dir", c.dir, "err", err)
	}
}
