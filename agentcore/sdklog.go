package agentcore

import (
	"context"
	"log/slog"
)

// sdkLogger is the logger handed to the MCP go-sdk. The go-sdk logs the life
// of every session at INFO ("server connecting", "server session
// connected", "session initialized", "server session disconnected"); in
// stateless mode every request is a session of its own, which made three
// INFO lines per request. Its INFO lines go out at DEBUG here; its warnings
// and errors are kept. Tool calls are logged by the framework, once each.
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
	if r.Level == slog.LevelInfo {
		r.Level = slog.LevelDebug
	}
	return d.h.Handle(ctx, r)
}

func (d infoAsDebug) WithAttrs(attrs []slog.Attr) slog.Handler {
	return infoAsDebug{d.h.WithAttrs(attrs)}
}

func (d infoAsDebug) WithGroup(name string) slog.Handler { return infoAsDebug{d.h.WithGroup(name)} }
