package mcpbind

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

// The go-sdk's warnings as it words them (mcp/shared.go notifySessions,
// mcp/streamable.go Write and deliverLocked, internal/jsonrpc2 Notify).
const (
	// noStream is a list change sent to a session whose client holds no
	// standing stream (no GET /mcp).
	noStream = "calling notifications/resources/list_changed: rejected by transport: undelivered message: stream not connected or already closed"
	// closing is a list change sent to a session that is ending (a
	// stateless request's, closed as its answer went out).
	closing = "calling notifications/tools/list_changed: client is closing"
	// brokenPipe is a list change that failed on a stream that is there.
	brokenPipe = "calling notifications/resources/list_changed: rejected by transport: undelivered message: write tcp 127.0.0.1:8080->127.0.0.1:51234: write: broken pipe"
	// requestNoStream is a request to the client, not a notification, that
	// could not go out: the server needed its answer.
	requestNoStream = "calling sampling/createMessage: rejected by transport: undelivered message: stream not connected or already closed"
)

// The agent's handler of the go-sdk's log: its INFO lines and the two
// warnings of a notification with nowhere to go come out at DEBUG (and not
// at all when the log is kept from INFO on); a notification that failed on
// a stream that is there, a request that could not go out and every error
// keep their level. Attributes and groups added later keep the rule.
func TestSDKLogLevels(t *testing.T) {
	cases := []struct {
		level slog.Level
		msg   string
		want  slog.Level
	}{
		{slog.LevelInfo, "session initialized", slog.LevelDebug},
		{slog.LevelWarn, noStream, slog.LevelDebug},
		{slog.LevelWarn, closing, slog.LevelDebug},
		{slog.LevelWarn, brokenPipe, slog.LevelWarn},
		{slog.LevelWarn, requestNoStream, slog.LevelWarn},
		{slog.LevelWarn, "Writing close event: write: broken pipe", slog.LevelWarn},
		{slog.LevelError, noStream, slog.LevelError},
		{slog.LevelDebug, "stream opened", slog.LevelDebug},
	}
	for _, kept := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		for _, with := range []string{"", "attrs", "group"} {
			var buf bytes.Buffer
			l := sdkLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: kept})))
			switch with {
			case "attrs":
				l = l.With("session_id", "s1")
			case "group":
				l = l.WithGroup("mcp")
			}
			for _, c := range cases {
				buf.Reset()
				l.Log(context.Background(), c.level, c.msg)
				var rec struct{ Level, Msg string }
				if buf.Len() > 0 {
					if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
						t.Fatalf("%s: %v", buf.String(), err)
					}
				}
				switch {
				case c.want < kept && buf.Len() > 0:
					t.Errorf("log kept from %v, %s: %v %q logged as %s; want it left out (%v)", kept, with, c.level, c.msg, rec.Level, c.want)
				case c.want >= kept && (rec.Level != c.want.String() || rec.Msg != c.msg):
					t.Errorf("log kept from %v, %s: %v %q logged as %q %q; want %v", kept, with, c.level, c.msg, rec.Level, rec.Msg, c.want)
				}
			}
			if l.Enabled(context.Background(), slog.LevelInfo) != (kept <= slog.LevelDebug) || !l.Enabled(context.Background(), slog.LevelWarn) {
				t.Errorf("log kept from %v, %s: Enabled(INFO) %v, Enabled(WARN) %v; want INFO only when DEBUG is kept, WARN always",
					kept, with, l.Enabled(context.Background(), slog.LevelInfo), l.Enabled(context.Background(), slog.LevelWarn))
			}
		}
	}
}
