package ops

import (
	"runtime"
	"time"

	"github.com/agentura/agentura/internal/lib/connlimit"
	"github.com/agentura/agentura/settings"
)

// Limits are the settings of the agent's limits, a section of
// agentcore.Config: what one caller and all of them together may take.
type Limits struct {
	MaxConcurrentCalls int           // AGENT_MAX_CONCURRENT_CALLS
	QueueTimeout       time.Duration // AGENT_QUEUE_TIMEOUT
	OwnerQuotaBytes    int64         // AGENT_OWNER_QUOTA_BYTES; negative: no quota (the variable says 0)
	QuotaRefresh       time.Duration // AGENT_QUOTA_REFRESH
	RateLimit          int           // AGENT_RATE_LIMIT; negative: no limit (the variable says 0)
	RateBurst          int           // AGENT_RATE_BURST; 0: twice RateLimit
	HeaderTimeout      time.Duration // AGENT_HEADER_TIMEOUT
	IdleTimeout        time.Duration // AGENT_IDLE_TIMEOUT
	BodyTimeout        time.Duration // AGENT_BODY_TIMEOUT
	MinBodyRate        int64         // AGENT_MIN_BODY_RATE; negative: not paced (the variable says 0)
	WriteTimeout       time.Duration // AGENT_WRITE_TIMEOUT; negative: no write deadline (the variable says 0)
	MaxConnections     int           // AGENT_MAX_CONNECTIONS; negative: no cap (the variable says 0)
	MaxClientConns     int           // AGENT_MAX_CLIENT_CONNECTIONS; negative: no cap (the variable says 0)
}

// Defaults of the limits.
const (
	// defaultQueueTimeout is how long a tool call waits for a free slot
	// before it is refused as busy.
	defaultQueueTimeout    = 30 * time.Second
	defaultOwnerQuotaBytes = 1 << 30
	defaultQuotaRefresh    = time.Minute
	// defaultRateLimit: requests per second per owner.
	defaultRateLimit     = 50
	defaultHeaderTimeout = 10 * time.Second
	defaultIdleTimeout   = 2 * time.Minute
	defaultBodyTimeout   = 30 * time.Second
	defaultMinBodyRate   = 10 << 10
	defaultWriteTimeout  = time.Minute // nginx's send_timeout
	// defaultMaxClientConns bounds one client's connections.
	defaultMaxClientConns = 128
)

// defaultMaxConcurrentCalls is the number of tool calls that run at once:
// four per CPU, as most tools wait on a child process, the disk or the
// network rather than compute in Go.
func defaultMaxConcurrentCalls() int { return 4 * runtime.NumCPU() }

// Settings declares the limits, each bound to its field of l.
func (l *Limits) Settings() settings.List {
	return settings.List{
		settings.Int(&l.MaxConcurrentCalls, "AGENT_MAX_CONCURRENT_CALLS", defaultMaxConcurrentCalls(),
			"tool calls (MCP and A2A) that run at once; more wait for a free slot").Positive().Shown("4 × CPUs"),
		settings.Duration(&l.QueueTimeout, "AGENT_QUEUE_TIMEOUT", defaultQueueTimeout,
			"how long a tool call waits for a free slot before it is refused with \"agent busy … try again\""),
		settings.Size(&l.OwnerQuotaBytes, "AGENT_OWNER_QUOTA_BYTES", defaultOwnerQuotaBytes,
			"bytes one owner may hold in the store, staged uploads and outputs together; over it `/uploads` answers `507` "+
				"and a tool's outputs fail, saying when space frees up; `0` = no quota").ZeroMeansOff(),
		settings.Duration(&l.QuotaRefresh, "AGENT_QUOTA_REFRESH", defaultQuotaRefresh,
			"how often the owners' use is read again from the store, to see what other replicas sharing it added or removed"),
		settings.Int(&l.RateLimit, "AGENT_RATE_LIMIT", defaultRateLimit,
			"requests per second one owner (the caller's `sub` under `AGENT_AUTH=jwt`, else the client address) may send to "+
				"`/mcp`, `/a2a` and `/uploads`; over it they answer `429` with `Retry-After`; `0` = no limit").ZeroMeansOff(),
		settings.Int(&l.RateBurst, "AGENT_RATE_BURST", 0, "requests one owner may send at once before AGENT_RATE_LIMIT applies").
			Shown("2 × `AGENT_RATE_LIMIT`"),
		settings.Duration(&l.HeaderTimeout, "AGENT_HEADER_TIMEOUT", defaultHeaderTimeout, "how long a client may take to send a request's headers"),
		settings.Duration(&l.IdleTimeout, "AGENT_IDLE_TIMEOUT", defaultIdleTimeout, "how long an idle keep-alive connection stays open"),
		settings.Duration(&l.BodyTimeout, "AGENT_BODY_TIMEOUT", defaultBodyTimeout,
			"slack of a request body to `/mcp`, `/a2a` and `/uploads`: it must start within this time and then keep up with AGENT_MIN_BODY_RATE"),
		settings.Size(&l.MinBodyRate, "AGENT_MIN_BODY_RATE", defaultMinBodyRate,
			"bytes per second a request body must average (after AGENT_BODY_TIMEOUT of slack), or the request fails and its connection "+
				"is closed; `0` = no minimum").ZeroMeansOff(),
		settings.Duration(&l.WriteTimeout, "AGENT_WRITE_TIMEOUT", defaultWriteTimeout,
			"how long a download may wait on its client: the deadline moves as the file goes out, so a client that stops reading "+
				"is dropped and a slow but steady one (a 512 KiB piece per timeout) is not; `0` = no deadline").ZeroMeansOff(),
		settings.Int(&l.MaxConnections, "AGENT_MAX_CONNECTIONS", connlimit.DefaultMax(),
			"connections open at once; a new one beyond it takes the place of the longest idle (or silent) connection "+
				"of the client holding the most connections (never of a client holding fewer than the newcomer's would), "+
				"or is closed when there is none; `0` = no cap").ZeroMeansOff().Shown("½ of the open-file limit"),
		settings.Int(&l.MaxClientConns, "AGENT_MAX_CLIENT_CONNECTIONS", defaultMaxClientConns,
			"connections open at once from one client (an IPv4 address, or an IPv6 /64; `AGENT_TRUSTED_PROXIES` are "+
				"exempt); a new one beyond it takes the place of that client's connection idle the longest, or is closed "+
				"when every one is busy; `0` = no cap").ZeroMeansOff(),
	}
}
