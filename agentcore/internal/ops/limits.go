package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentura/agentura/settings"
	"github.com/prometheus/client_golang/prometheus"
)

// ErrBusy is what a tool call is refused with when every slot stayed taken
// for AGENT_QUEUE_TIMEOUT.
var ErrBusy = errors.New("agent busy")

// CallSlots bound the tool calls that run at once
// (AGENT_MAX_CONCURRENT_CALLS): a call takes a slot or waits for one up to
// the queue timeout (AGENT_QUEUE_TIMEOUT).
type CallSlots struct {
	slots   chan struct{}
	timeout time.Duration
	queued  prometheus.Gauge
	running prometheus.Gauge
	refused *prometheus.CounterVec
}

// NewCallSlots makes n slots, waited for at most timeout, counted in m.
func NewCallSlots(n int, timeout time.Duration, m *Metrics) *CallSlots {
	return &CallSlots{slots: make(chan struct{}, n), timeout: timeout,
		queued: m.CallsQueued, running: m.CallsRunning, refused: m.Refused}
}

// Acquire takes a slot, waiting up to the queue timeout; release gives it
// back. A call refused as busy gets an error wrapping ErrBusy that tells the
// caller to try again.
func (c *CallSlots) Acquire(ctx context.Context) (release func(), err error) {
	select {
	case c.slots <- struct{}{}:
	default:
		c.queued.Inc()
		t := time.NewTimer(c.timeout)
		select {
		case c.slots <- struct{}{}:
			t.Stop()
			c.queued.Dec()
		case <-t.C:
			c.queued.Dec()
			c.refused.WithLabelValues("busy").Inc()
			return nil, fmt.Errorf("%w: all %d tool-call slots stayed taken for %s (AGENT_MAX_CONCURRENT_CALLS, AGENT_QUEUE_TIMEOUT); try again in a few seconds",
				ErrBusy, cap(c.slots), settings.FormatDuration(c.timeout))
		case <-ctx.Done():
			t.Stop()
			c.queued.Dec()
			return nil, fmt.Errorf("the call was cancelled while waiting for a free slot: %w", context.Cause(ctx))
		}
	}
	c.running.Inc()
	return func() {
		c.running.Dec()
		<-c.slots
	}, nil
}
