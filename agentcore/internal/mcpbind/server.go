// Package mcpbind is the agent's MCP binding: every revision the go-sdk
// knows on one /mcp endpoint (2026-07-28 statelessly, the older ones through
// sessions), server/discover and the capabilities declared, the tools as
// the Runner runs them, produced files as resources, progress and log
// messages, cancellation, MCP tasks on both revisions, the draft's
// files/authorize* methods, and the owner scopes of anonymous callers. It
// knows nothing of agentcore: it is handed what it serves (Config).
package mcpbind

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/httpguard"
	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/agentura/agentura/signing"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config is what the MCP binding serves.
type Config struct {
	// Name, Title, Version and Instructions describe the agent.
	Name, Title, Version, Instructions string
	Log                                *slog.Logger
	// Runner runs the tools.
	Runner calls.Runner
	// Store holds the files; Files signs their URLs and opens the agent's
	// own; Signer signs the owner handles.
	Store  fileserve.Store
	Files  *filehttp.Server
	Signer *signing.Signer
	// Handout is how a stored output is handed out (transport.Registry).
	Handout func(fileserve.Meta) (transport.Offer, error)
	// FileURIs answer the draft's files/authorize*; Scopes keep what each
	// anonymous caller produced; Inline stages inline files of requests.
	FileURIs *transport.FileURIs
	Scopes   *transport.Scopes
	Inline   *transport.InlinePass
	Callers  *callers.Guard
	// Tasks are the MCP tasks; nil when the store keeps no records.
	Tasks *tasks.MCP
	// PublicURL, OutputTTL, EmbedMaxBytes, ResourceMaxBytes and Stateless
	// are the agent's settings of those names (AGENT_*).
	PublicURL                       string
	OutputTTL                       time.Duration
	EmbedMaxBytes, ResourceMaxBytes int64
	Stateless                       bool
	// Draining is done when shutdown begins: standing streams end.
	Draining context.Context
}

// Server is the MCP binding of one agent.
type Server struct {
	Config
	mcp            *mcp.Server
	requests       requestContexts // stateless MCP requests in flight (cancel.go)
	taskListeners  taskWake        // wakes task listen streams (tasks_http.go)
	sessionStreams sessionStreams  // 2025-11-25 standing streams, for task notifications
}

// New serves c on a new go-sdk server: resources, tasks and the draft's
// file methods, each request in a span continuing the caller's trace
// (internal/lib/mcptrace); tools are added with AddTool.
func New(c Config) *Server {
	s := &Server{Config: c}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: c.Name, Title: c.Title, Version: c.Version}, s.serverOptions())
	s.serveResources()
	s.serveTasks()
	s.serveFileTransfer()
	// Added last, so outermost: the request's span covers everything the
	// binding does for it.
	s.mcp.AddReceivingMiddleware(mcptrace.Server)
	return s
}

// SDK is the go-sdk server, for an author's prompts and resources.
func (s *Server) SDK() *mcp.Server { return s.mcp }

// Handler is /mcp, bodies up to limit: inline files decoded as the body
// arrives (transport.InlinePass), each body read once strictly and its
// scopes checked (callers.Guard.JSONRPC), standing streams drained at
// shutdown, a stateless request's drop cancelling its call, the go-sdk's
// terse answers made clear (httpguard.MCP), tasks around the go-sdk, each
// request's JSON-RPC id kept for its span (mcptrace.RequestIDs).
func (s *Server) Handler(limit int64) http.Handler {
	return s.Inline.Wrap(transport.MCP, limit, s.Callers.JSONRPC(limit, callers.MCPScope,
		s.drainable(s.linkRequestContexts(httpguard.MCP(limit, s.taskHTTP(s.mcpHandler(limit)))))))
}

// RunStdio serves MCP over stdin and stdout until ctx ends or stdin closes.
func (s *Server) RunStdio(ctx context.Context) error { return s.mcp.Run(ctx, &mcp.StdioTransport{}) }

// StreamOpen reports whether the 2025-11-25 session id has a standing GET
// stream open on this replica.
func (s *Server) StreamOpen(id string) bool { return s.sessionStreams.isOpen(id) }

// failure is transport.Failure, logged to the server's log.
func (s *Server) failure(ctx context.Context, what string, err error) error {
	return transport.Failure(ctx, s.Log, what, err)
}
