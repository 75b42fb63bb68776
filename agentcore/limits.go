package agentcore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/agentura/agentura/settings"
	"github.com/prometheus/client_golang/prometheus"
)

// defaultQueueTimeout is how long a tool call waits for a free slot
// (AGENT_QUEUE_TIMEOUT) before it is refused as busy.
const defaultQueueTimeout = 30 * time.Second

// defaultMaxConcurrentCalls is the number of tool calls that run at once
// (AGENT_MAX_CONCURRENT_CALLS): four per CPU, as most tools wait on a
// child process, the disk or the network rather than compute in Go.
func defaultMaxConcurrentCalls() int { return 4 * runtime.NumCPU() }

// ErrBusy is what a tool call is refused with when every slot stayed taken
// for AGENT_QUEUE_TIMEOUT.
var ErrBusy = errors.New("agent busy")

// callSlots bounds the tool calls that run at once: a call takes a slot or
// waits for one up to the queue timeout.
type callSlots struct {
	slots   chan struct{}
	timeout time.Duration
	queued  prometheus.Gauge
	running prometheus.Gauge
	refused *prometheus.CounterVec
}

func newCallSlots(n int, timeout time.Duration, m *serviceMetrics) *callSlots {
	return &callSlots{slots: make(chan struct{}, n), timeout: timeout,
		queued: m.callsQueued, running: m.callsRunning, refused: m.refused}
}

// acquire takes a slot, waiting up to the queue timeout; release gives it
// back. A call refused as busy gets an error wrapping ErrBusy that tells the
// caller to try again.
func (c *callSlots) acquire(ctx context.Context) (release func(), err error) {
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
