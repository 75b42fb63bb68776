package agentcore

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/filehttp"
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
	hooks    *callHooks    // what the transport lets the call send back (progress.go)
	progress progressState // rate limit of Progress
	dir      string
	mkdir    sync.Once
	mkdirOK  error
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
		hooks:  &callHooks{},
		dir:    filepath.Join(s.calls.dir, fileserve.NewID()),
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
func (c *Call) ResolveFile(ctx context.Context, name, content string) (*InputFile, error) {
	return c.svc.resolver.resolve(ctx, c.Owner, filepath.Join(c.dir, "in"), name, content)
}

// end removes the call's folder.
func (c *Call) end() {
	if err := os.RemoveAll(c.dir); err != nil {
		c.Logger.Warn("could not remove call folder", "dir", c.dir, "err", err)
	}
}
