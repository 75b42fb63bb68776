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

// Call is one invocation of a tool: its caller, folder, inputs and outputs.
type Call struct {
	Tool   string       // the name of the tool called
	Owner  string       // the caller: its verified token's sub, or AnonymousOwner; files are scoped to it
	Logger *slog.Logger // the agent's log, with the call's tool and request id

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

// WorkDir returns the call's private folder, removed when the call ends.
func (c *Call) WorkDir() (string, error) {
	c.mkdir.Do(func() { c.mkdirOK = os.MkdirAll(filepath.Join(c.dir, "work"), 0o700) })
	return filepath.Join(c.dir, "work"), c.mkdirOK
}

// ResolveFileAttachment makes a file parameter a local file. Its error is a
// *ResolveError; test it with errors.Is (ErrUnresolvedReference, ...).
func (c *Call) ResolveFileAttachment(ctx context.Context, f FileAttachment) (*InputFile, error) {
	return c.ResolveFile(ctx, f.Name, f.Content)
}

// ResolveFile is ResolveFileAttachment for a FileContent and its name. A call
// resolves each input once, all within AGENT_MAX_CALL_INPUT_BYTES.
func (c *Call) ResolveFile(ctx context.Context, name, content string) (*InputFile, error) {
	f, err := c.inputs.resolve(name, content, c.svc.cfg.MaxCallInputBytes, func() (*InputFile, error) {
		in, err := c.svc.resolver.Resolve(ctx, c.Owner, filepath.Join(c.dir, "in"), name, content)
		if err != nil {
			return nil, err
		}
		return (*InputFile)(in), nil
	})
	if err == nil { // for the call's log line
		c.logMu.Lock()
		c.logInputs = append(c.logInputs, fmt.Sprintf("%s (%d B)", f.Name, f.Size))
		c.logMu.Unlock()
	}
	return f, err
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
