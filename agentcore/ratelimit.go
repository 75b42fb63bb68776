package agentcore

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/internal/filehttp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// DefaultRateLimit is AGENT_RATE_LIMIT: requests per second per owner.
const DefaultRateLimit = 50

// maxRateOwners bounds the owners whose limiters are kept; past it, idle
// ones are forgotten (a forgotten owner starts again with a full burst,
// which is what an idle one has anyway).
const maxRateOwners = 10000

// rateLimiter limits the requests of each owner (the verified caller, or
// the client address without authentication) with a token bucket.
type rateLimiter struct {
	limit   rate.Limit
	burst   int
	trusted []netip.Prefix
	refused prometheus.Counter

	mu     sync.Mutex
	owners map[string]*ownerRate
}

// ownerRate is one owner's bucket and when it was last used.
type ownerRate struct {
	lim  *rate.Limiter
	last time.Time
}

func newRateLimiter(cfg Config, refused *prometheus.CounterVec) *rateLimiter {
	if cfg.RateLimit <= 0 {
		return nil
	}
	burst := cfg.RateBurst
	if burst <= 0 {
		burst = 2 * cfg.RateLimit
	}
	trusted, _ := parseTrustedProxies(cfg.TrustedProxies) // checked by Config
	return &rateLimiter{limit: rate.Limit(cfg.RateLimit), burst: burst, trusted: trusted,
		refused: refused.WithLabelValues("rate_limit"), owners: map[string]*ownerRate{}}
}

// parseTrustedProxies reads AGENT_TRUSTED_PROXIES: CIDRs or single addresses.
func parseTrustedProxies(items []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range items {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a CIDR such as 10.0.0.0/8", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// checkTrustedProxies is the settings check of AGENT_TRUSTED_PROXIES.
func checkTrustedProxies(text string) error {
	_, err := parseTrustedProxies(strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' }))
	return err
}

// wrap limits the requests h gets; over the limit it answers 429 with
// Retry-After and a JSON error. nil limits nothing.
func (l *rateLimiter) wrap(h http.Handler) http.Handler {
	if l == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		owner := l.owner(r)
		if wait, ok := l.allow(owner, time.Now()); !ok {
			l.refused.Inc()
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
			filehttp.WriteError(w, http.StatusTooManyRequests, fmt.Sprintf(
				"rate limit: %s sent more than %g requests per second (burst %d; AGENT_RATE_LIMIT, AGENT_RATE_BURST); retry after %d s",
				owner, float64(l.limit), l.burst, max(secs, 1)))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// owner names who sent r: the verified caller under authentication, else
// the client's address (from X-Forwarded-For only when the peer is a
// trusted proxy).
func (l *rateLimiter) owner(r *http.Request) string {
	if ti, ok := r.Context().Value(verifiedCaller{}).(*auth.TokenInfo); ok && ti.UserID != "" {
		return "caller " + strconv.Quote(ti.UserID)
	}
	return "client " + clientAddr(r, l.trusted).String()
}

// clientAddr is the address of the client that sent r: the peer, or when
// the peer is a trusted proxy the last address of X-Forwarded-For that is
// not one (proxies append the address they heard from).
func clientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	peer = peer.Unmap()
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	if !isTrusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer // a hop we cannot read: the proxy's word ends here
		}
		if a = a.Unmap(); !isTrusted(a) {
			return a
		}
		peer = a
	}
	return peer
}

// allow takes a token from owner's bucket, or says how long until one is
// there.
func (l *rateLimiter) allow(owner string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o := l.owners[owner]
	if o == nil {
		if len(l.owners) >= maxRateOwners {
			l.evict(now)
		}
		o = &ownerRate{lim: rate.NewLimiter(l.limit, l.burst)}
		l.owners[owner] = o
	}
	o.last = now
	if o.lim.AllowN(now, 1) {
		return 0, true
	}
	res := o.lim.ReserveN(now, 1)
	wait := res.DelayFrom(now)
	res.CancelAt(now)
	return wait, false
}

// evict forgets the owners whose buckets have refilled (idle long enough
// to be as new), or, when all are busy, half of them. l.mu is held.
func (l *rateLimiter) evict(now time.Time) {
	full := time.Duration(float64(l.burst) / float64(l.limit) * float64(time.Second))
	for k, o := range l.owners {
		if now.Sub(o.last) > full {
			delete(l.owners, k)
		}
	}
	for k := range l.owners {
		if len(l.owners) < maxRateOwners/2 {
			break
		}
		delete(l.owners, k)
	}
}
