package agentcore

import (
	"log/slog"
	"sync"
	"time"

	"github.com/agentura/agentura/agentcore/internal/calls"
)

// Progress reports are rate-limited per call by a token bucket: a burst of
// progressBurst reports, then one per ProgressInterval. Reports over the
// limit are dropped, except the one that completes the total. A tool may
// thus report in a tight loop without flooding its caller, and a short
// document still reports every page.
const (
	progressInterval = 100 * time.Millisecond
	progressBurst    = 10
)

// progressState rate-limits a call's reports and keeps them non-decreasing.
type progressState struct {
	mu       sync.Mutex
	tokens   float64
	last     time.Time
	lastDone float64
	sent     bool
}

// allow decides on a report of done of total at now.
func (p *progressState) allow(done, total float64, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.sent {
		p.tokens = progressBurst
	} else {
		p.tokens = min(progressBurst, p.tokens+float64(now.Sub(p.last))/float64(progressInterval))
	}
	final := total > 0 && done >= total
	switch {
	case p.sent && done < p.lastDone: // progress only grows
		return false
	case final && p.sent && p.lastDone >= total: // the end is told once
		return false
	case !final && p.tokens < 1:
		return false
	}
	p.tokens = max(p.tokens-1, 0)
	p.last, p.lastDone, p.sent = now, done, true
	return true
}

// Progress reports done of total units (total 0: unknown) with a message,
// rate-limited and never going back. It is safe for concurrent use.
func (c *Call) Progress(done, total float64, message string) {
	if c.hooks.Progress == nil || !c.progress.allow(done, total, time.Now()) {
		return
	}
	c.hooks.Progress(calls.Progress{Done: done, Total: total, Message: message})
}

// Log sends msg and attrs (as for slog) to the caller if it asked for level.
func (c *Call) Log(level slog.Level, msg string, attrs ...any) {
	c.hooks.Send(level, msg, attrs...)
}
