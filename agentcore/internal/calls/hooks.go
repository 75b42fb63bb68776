package calls

import (
	"context"
	"io"
	"log/slog"
	"time"
	"unicode/utf8"
)

// Progress is one report of a running call: done of total units (total 0
// when unknown) and a short message.
type Progress struct {
	Done, Total float64
	Message     string
}

// Hooks are what the transport that carried a call lets it send to the
// caller while it runs. Any may be nil.
type Hooks struct {
	Progress func(Progress)
	Log      func(level slog.Level, msg string, data map[string]any)
	// Output, when set, is handed the bytes of each output the call
	// stores through the program (a tool's Reader, a file copied in) as
	// the store reads them, under the output's final name, so that the
	// transport sends them on while the output is written. An error of its
	// writer stops the store of that output.
	Output func(name string) io.Writer
}

type hooksKey struct{}

// WithHooks returns ctx carrying h for the call run under it.
func WithHooks(ctx context.Context, h *Hooks) context.Context {
	return context.WithValue(ctx, hooksKey{}, h)
}

// HooksFrom returns the hooks ctx carries, or none.
func HooksFrom(ctx context.Context) *Hooks {
	h, _ := ctx.Value(hooksKey{}).(*Hooks)
	if h == nil {
		return &Hooks{}
	}
	return h
}

// Send logs msg with attrs (key/value pairs, as for slog) to the caller at
// level, when the transport takes log messages.
func (h *Hooks) Send(level slog.Level, msg string, attrs ...any) {
	if h.Log == nil {
		return
	}
	data := map[string]any{"message": msg}
	r := slog.NewRecord(time.Time{}, level, msg, 0)
	r.Add(attrs...)
	r.Attrs(func(a slog.Attr) bool {
		data[a.Key] = a.Value.Resolve().Any()
		return true
	})
	h.Log(level, msg, data)
}

// Latest puts p into ch (of capacity 1), replacing a report not yet taken:
// the reader only ever needs the newest.
func Latest(ch chan Progress, p Progress) {
	for {
		select {
		case ch <- p:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

type fileScopeKey struct{}

// WithFileScope is ctx carrying scope, the anonymous caller's scope ("" for
// none: see the MCP binding's owner scopes), for the file URIs resolved and
// the files produced under it.
func WithFileScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, fileScopeKey{}, scope)
}

// FileScope is the anonymous caller's scope ctx carries; "" for none.
func FileScope(ctx context.Context) string {
	scope, _ := ctx.Value(fileScopeKey{}).(string)
	return scope
}

// Truncate cuts s to at most n bytes, marking the cut, never inside a
// character.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
