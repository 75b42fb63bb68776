package ops

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"

	"github.com/agentura/agentura/internal/lib/connlimit"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/prometheus/client_golang/prometheus"
)

// NewConnLimiter makes the cap on open connections (AGENT_MAX_CONNECTIONS,
// AGENT_MAX_CLIENT_CONNECTIONS), with its metrics in reg: connections open,
// and those closed to make room or refused. exempt, when not nil, tells the
// addresses no cap applies to (the trusted proxies).
func NewConnLimiter(l Limits, exempt func(netip.Addr) bool, reg prometheus.Registerer) *connlimit.Limiter {
	shed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_connections_shed_total",
		Help: "Connections closed to make room for a new one (evicted) or closed as they came (refused), by the cap reached: client (AGENT_MAX_CLIENT_CONNECTIONS) or total (AGENT_MAX_CONNECTIONS).",
	}, []string{"action", "limit"})
	lim := connlimit.New(connlimit.Config{Max: l.MaxConnections, PerClient: l.MaxClientConns, Exempt: exempt,
		OnShed: func(action, limit string) { shed.WithLabelValues(action, limit).Inc() }})
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "agentura_connections_open",
		Help: "HTTP connections open now (AGENT_MAX_CONNECTIONS caps them).",
	}, func() float64 { return float64(lim.Open()) })
	reg.MustRegister(shed, open)
	return lim
}

// HTTPServer is the agent's server of h on ln: every route under net/http's
// timeouts — a request's headers within AGENT_HEADER_TIMEOUT of its first
// byte (and of the connection's opening), a connection idle between
// requests for AGENT_IDLE_TIMEOUT at most —, downloads under a write
// deadline that moves with them (AGENT_WRITE_TIMEOUT, internal/lib/filehttp),
// and connections capped by conns in total and per client address. It
// returns the listener to serve.
func HTTPServer(h http.Handler, l Limits, conns *connlimit.Limiter, log *slog.Logger, ln net.Listener) (*http.Server, net.Listener) {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.HeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnContext:       filehttp.ConnContext, // downloads cork the connection
		ConnState:         conns.ConnState,
	}
	return srv, conns.Listener(ln)
}
