package mcpbind

import (
	"context"
	"log/slog"
	"strings"
)

// sdkLogger is the logger handed to the MCP go-sdk. The go-sdk logs the life
// of every session at INFO ("server connecting", "server session
// connected", "session initialized", "server session disconnected"); in
// stateless mode every request is a session of its own, which made three
// INFO lines per request. Its INFO lines go out at DEBUG here; its warnings
// and errors are kept, but one: a notification (a list change) that has
// nowhere to go, because the session holds no standing stream (a client
// without GET /mcp, a stateless request) or is ending, is the ordinary
// case, not a fault, and goes out at DEBUG too; a notification that fails on a stream
// that is there stays a warning. Tool calls are logged by the framework,
// once each.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(infoAsDebug{l.Handler()})
}

// infoAsDebug lowers INFO records to DEBUG before its handler sees them.
type infoAsDebug struct{ h slog.Handler }

func (d infoAsDebug) Enabled(ctx context.Context, level slog.Level) bool {
	if level == slog.LevelInfo {
		level = slog.LevelDebug
	}
	return d.h.Enabled(ctx, level)
}

func (d infoAsDebug) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo || (r.Level == slog.LevelWarn && undeliverable(r.Message)) {
		r.Level = slog.LevelDebug
		if !d.h.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return d.h.Handle(ctx, r)
}

// undeliverable reports whether msg is the go-sdk's warning of a
// notification sent to a session without a stream to carry it ("calling
// notifications/...: rejected by transport: undelivered message: stream not
// connected or already closed") or to one that is ending ("...: client is
// closing": a stateless request's session, closed as its answer went out).
func undeliverable(msg string) bool {
	return strings.HasPrefix(msg, "calling notifications/") &&
		(strings.HasSuffix(msg, "stream not connected or already closed") || strings.HasSuffix(msg, ": client is closing"))
}

func (d infoAsDebug) WithAttrs(attrs []slog.Attr) slog.Handler {
	return infoAsDebug{d.h.WithAttrs(attrs)}
}

func (d infoAsDebug) WithGroup(name string) slog.Handler { return infoAsDebug{d.h.WithGroup(name)} }
