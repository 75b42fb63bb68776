// Package a2abind is the agent's A2A binding (A2A v0.3, a2a-go): /a2a's
// JSON-RPC, the agent card, a message's skill run as a tool call through
// the Runner, its file parts in, the produced files out as artifacts, and
// its task kept by the task engine (internal/tasks). It knows nothing of
// agentcore: it is handed what it serves (Config).
package a2abind

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/fileserve"
	"github.com/prometheus/client_golang/prometheus"
)

// Config is what the A2A binding serves.
type Config struct {
	// Name, Title, Version and Instructions describe the agent.
	Name, Title, Version, Instructions string
	Log                                *slog.Logger
	Registry                           prometheus.Registerer
	Runner                             calls.Runner
	Store                              fileserve.Store
	Callers                            *callers.Guard
	Inline                             *transport.InlinePass
	// Ledger is the task engine's; nil when the store keeps no records
	// (tasks are then kept in memory).
	Ledger *tasks.Ledger
	// The agent's settings of those names (AGENT_*).
	PublicURL         string
	URLTTL, OutputTTL time.Duration
	A2AStatusInterval time.Duration
	EmbedMaxBytes     int64
}

// Server is the A2A binding of one agent.
type Server struct {
	Config
	windows chunkWindows // of the tasks sending files in chunks
}

// New serves c.
func New(c Config) *Server { return &Server{Config: c} }

// Handler is /a2a, bodies up to limit: inline file parts staged as the
// body arrives, each body read once strictly and its scopes checked, then
// a2a-go's JSON-RPC.
func (s *Server) Handler(limit int64) http.Handler {
	return s.Inline.Wrap(transport.A2A, limit, s.Callers.JSONRPC(limit, callers.A2AScope, s.a2aHandler(limit)))
}
