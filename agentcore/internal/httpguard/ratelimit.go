package httpguard

import (
	"cmp"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// maxRateOwners bounds the owners whose limiters are kept; past it, idle
// ones are forgotten (a forgotten owner starts again with a full burst,
// which is what an idle one has anyway).
const maxRateOwners = 10000

// RateLimiter limits the requests of each owner (the verified caller, or
// the client address without authentication) with a token bucket.
type RateLimiter struct {
	limit   rate.Limit
	burst   int
	refused prometheus.Counter
	caller  func(*http.Request) string // the verified caller's id, or ""

	mu     sync.Mutex
	owners map[string]*ownerRate
}

// ownerRate is one owner's bucket and when it was last used.
type ownerRate struct {
	lim  *rate.Limiter
	last time.Time
}

// NewRateLimiter returns the limiter letting each owner send perSecond
// requests a second (AGENT_RATE_LIMIT) after a burst of burst at once
// (AGENT_RATE_BURST; 0: twice perSecond); refused counts the requests
// refused, caller names the verified caller of a request ("" when none).
// A perSecond of zero or less limits nothing (nil).
func NewRateLimiter(perSecond, burst int, refused prometheus.Counter, caller func(*http.Request) string) *RateLimiter {
	if perSecond <= 0 {
		return nil
	}
	return &RateLimiter{limit: rate.Limit(perSecond), burst: cmp.Or(max(burst, 0), 2*perSecond),
		refused: refused, caller: caller, owners: map[string]*ownerRate{}}
}

// Wrap limits the requests h gets; over the limit it answers 429 with
// Retry-After and a JSON error. nil limits nothing.
func (l *RateLimiter) Wrap(h http.Handler) http.Handler {
	if l == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		owner := l.owner(r)
		if wait, ok := l.allow(owner, time.Now()); !ok {
			l.refused.Inc()
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
			httpjson.WriteError(w, http.StatusTooManyRequests, fmt.Sprintf(
				"rate limit: %s sent more than %g requests per second (burst %d; AGENT_RATE_LIMIT, AGENT_RATE_BURST); retry after %d s",
				owner, float64(l.limit), l.burst, max(secs, 1)))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// owner names who sent r: the verified caller under authentication, else
// the client's address. The request log middleware has already put the
// client named by a trusted proxy's X-Forwarded-For (AGENT_TRUSTED_PROXIES,
// proxies.go) into RemoteAddr.
func (l *RateLimiter) owner(r *http.Request) string {
	if id := l.caller(r); id != "" {
		return "caller " + strconv.Quote(id)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "client " + host
}

// allow takes a token from owner's bucket, or says how long until one is
// there.
func (l *RateLimiter) allow(owner string, now time.Time) (time.Duration, bool) {
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
func (l *RateLimiter) evict(now time.Time) {
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
