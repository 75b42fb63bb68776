package agentcore

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"

	"github.com/agentura/agentura/internal/lib/connlimit"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/prometheus/client_golang/prometheus"
)

// newConnLimiter makes the cap on open connections (AGENT_MAX_CONNECTIONS,
// AGENT_MAX_CLIENT_CONNECTIONS), with its metrics: connections open, and
// those closed to make room or refused.
func (s *Service) newConnLimiter() *connlimit.Limiter {
	shed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_connections_shed_total",
		Help: "Connections closed to make room for a new one (evicted) or closed as they came (refused), by the cap reached: client (AGENT_MAX_CLIENT_CONNECTIONS) or total (AGENT_MAX_CONNECTIONS).",
	}, []string{"action", "limit"})
	var exempt func(netip.Addr) bool
	if s.proxies != nil {
		exempt = s.proxies.Trusts
	}
	l := connlimit.New(connlimit.Config{Max: s.cfg.MaxConnections, PerClient: s.cfg.MaxClientConns, Exempt: exempt,
		OnShed: func(action, limit string) { shed.WithLabelValues(action, limit).Inc() }})
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "agentura_connections_open",
		Help: "HTTP connections open now (AGENT_MAX_CONNECTIONS caps them).",
	}, func() float64 { return float64(l.Open()) })
	s.registry.MustRegister(shed, open)
	return l
}

// httpServer is the agent's server on ln: every route under net/http's
// timeouts — a request's headers within AGENT_HEADER_TIMEOUT of its first
// byte (and of the connection's opening), a connection idle between
// requests for AGENT_IDLE_TIMEOUT at most —, downloads under a write
// deadline that moves with them (AGENT_WRITE_TIMEOUT, internal/lib/filehttp),
// and connections capped in total and per client address. It returns the
// listener to serve.
func (s *Service) httpServer(ln net.Listener) (*http.Server, net.Listener) {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.HeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ConnContext:       filehttp.ConnContext, // downloads cork the connection
		ConnState:         s.conns.ConnState,
	}
	return srv, s.conns.Listener(ln)
}
