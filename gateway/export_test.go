package gateway

import "time"

// WithConnectTimeout returns cfg whose attempts to open a session with an
// agent last at most d, for tests that outlast one.
func WithConnectTimeout(cfg Config, d time.Duration) Config {
	cfg.connectTimeout = d
	return cfg
}

// SetMaxHostTasks sets how many passed tasks g keeps (maxHostTasks), for
// tests that fill the map.
func SetMaxHostTasks(g *Gateway, n int) {
	g.hostTasks.mu.Lock()
	defer g.hostTasks.mu.Unlock()
	g.hostTasks.max = n
}

// HostTasks is how many passed tasks g keeps.
func HostTasks(g *Gateway) int { return g.hostTasks.len() }

// len is how many entries are kept.
func (h *hostTasks) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.tasks)
}
