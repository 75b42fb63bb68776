package mcpbind

import (
	"context"
	"log/slog"

	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpCallHooks are the hooks of a tools/call request: progress for its
// progressToken, log messages at the session's level.
func (s *Server) mcpCallHooks(ctx context.Context, req *mcp.CallToolRequest, tool string) *calls.Hooks {
	h := &calls.Hooks{}
	if req.Session == nil {
		return h
	}
	if token := req.Params.GetProgressToken(); token != nil {
		h.Progress = s.progressTo(ctx, req.Session, token, tool, "progress notification not sent")
	}
	h.Log = func(level slog.Level, msg string, data map[string]any) {
		err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcpLevel(level), Logger: tool, Data: data})
		if err != nil {
			s.Log.Debug("log notification not sent", "tool", tool, "err", err)
		}
	}
	return h
}

// progressTo sends each progress report of tool to session, for the
// request of token; failed logs a notification not sent.
func (s *Server) progressTo(ctx context.Context, session *mcp.ServerSession, token any, tool, failed string) func(calls.Progress) {
	return func(p calls.Progress) {
		err := session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p.Done, Total: p.Total, Message: p.Message})
		if err != nil {
			s.Log.Debug(failed, "tool", tool, "err", err)
		}
	}
}

// mcpLevel maps a slog level to the nearest MCP (syslog) level.
func mcpLevel(l slog.Level) mcp.LoggingLevel {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warning"
	case l < slog.LevelError+4:
		return "error"
	case l < slog.LevelError+8:
		return "critical"
	case l < slog.LevelError+12:
		return "alert"
	}
	return "emergency"
}
