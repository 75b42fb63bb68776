// Package connlimit caps the connections a server holds open, in total and
// per client, so that clients holding idle or silent connections cannot
// take every file descriptor and starve the others (a health probe
// included). A client is an IPv4 address, or an IPv6 /64 prefix: one host
// is commonly given a whole /64 and may send from any address in it.
//
// A connection over a cap first takes the place of one that waits for a
// request (silent since it was accepted, or idle between requests). When
// the client's cap is reached it is the client's own that has waited
// longest. When the total is reached it is one of the client holding the
// most connections — the one over its fair share, the newcomer's own client
// when that is the largest — again the one that has waited longest; a
// client holding fewer connections than the newcomer's would is never
// shed for it. Only when no connection may be shed is the new one closed at
// once. A client that opens many silent connections thus loses its own,
// and a new client still gets in.
package connlimit

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Limiter counts a server's open connections. Its Listener admits them and
// its ConnState (the server's http.Server.ConnState) follows them. It is
// safe for concurrent use.
type Limiter struct {
	max, perClient int                   // ≤ 0: no cap
	exempt         func(netip.Addr) bool // addresses without a per-client cap; nil: none

	mu       sync.Mutex
	conns    map[net.Conn]*entry
	byClient map[netip.Addr]int
	onShed   func(action, limit string) // nil: not told
}

// entry is what the Limiter knows of an open connection.
type entry struct {
	client  netip.Addr // invalid: not an IP connection
	waiting bool       // no request in progress
	since   time.Time  // when it began waiting
}

// Config is what a Limiter is built from.
type Config struct {
	// Max caps the open connections; 0 or less: no cap.
	Max int
	// PerClient caps the open connections of one client IP address; 0 or
	// less: no cap.
	PerClient int
	// Exempt, when not nil, reports addresses that PerClient does not
	// apply to (trusted proxies, which carry many clients); Max still
	// does. It is asked only when an address reaches PerClient.
	Exempt func(netip.Addr) bool
	// OnShed, when not nil, is told of each connection closed to make room
	// ("evicted") or refused ("refused"), with the cap ("client" or
	// "total"): for a metric.
	OnShed func(action, limit string)
}

// New returns a Limiter of cfg.
func New(cfg Config) *Limiter {
	return &Limiter{max: cfg.Max, perClient: cfg.PerClient, exempt: cfg.Exempt, onShed: cfg.OnShed,
		conns: map[net.Conn]*entry{}, byClient: map[netip.Addr]int{}}
}

// Listener returns ln admitting only what the caps allow. The server that
// serves it must call l.ConnState from its http.Server.ConnState, or
// closed connections are never counted out.
func (l *Limiter) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, l: l} }

// listener is the Listener of a Limiter.
type listener struct {
	net.Listener
	l *Limiter
}

// Accept returns the next connection the caps admit; the others are closed.
func (ln *listener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if ln.l.admit(c) {
			return c, nil
		}
		c.Close()
	}
}

// Open returns the number of connections open.
func (l *Limiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// admit counts c in, making room for it when a cap is reached; it reports
// false when there is none to make.
func (l *Limiter) admit(c net.Conn) bool {
	addr := addrOf(c)
	client := ClientKey(addr)
	now := time.Now()
	var shed []net.Conn
	l.mu.Lock()
	ok := true
	if l.perClient > 0 && client.IsValid() && l.byClient[client] >= l.perClient && (l.exempt == nil || !l.exemptLocked(addr)) {
		ok = l.makeRoom(l.oldestWaiting(client), "client", &shed)
	}
	if ok && l.max > 0 && len(l.conns) >= l.max {
		ok = l.makeRoom(l.heaviestWaiting(client), "total", &shed)
	}
	if ok {
		l.conns[c] = &entry{client: client, waiting: true, since: now}
		if client.IsValid() {
			l.byClient[client]++
		}
	}
	l.mu.Unlock()
	for _, old := range shed {
		old.Close() // the server sees it fail and reports it closed; it is counted out already
	}
	return ok
}

// exemptLocked asks exempt without holding the lock (it may look up names).
func (l *Limiter) exemptLocked(client netip.Addr) bool {
	l.mu.Unlock()
	defer l.mu.Lock()
	return l.exempt(client)
}

// makeRoom adds old, counted out already, to shed for a connection over
// the cap limit ("client" or "total") and reports it evicted; with no old
// to shed it reports the new one refused and returns false. l.mu is held.
func (l *Limiter) makeRoom(old net.Conn, limit string, shed *[]net.Conn) bool {
	action := "refused"
	if old != nil {
		action, *shed = "evicted", append(*shed, old)
	}
	if l.onShed != nil {
		l.onShed(action, limit)
	}
	return old != nil
}

// oldestWaiting counts out and returns the connection of client that has
// waited longest for a request; nil when none waits.
func (l *Limiter) oldestWaiting(client netip.Addr) net.Conn {
	var best net.Conn
	var at time.Time
	for c, e := range l.conns {
		if e.waiting && e.client == client && (best == nil || e.since.Before(at)) {
			best, at = c, e.since
		}
	}
	if best != nil {
		l.forget(best)
	}
	return best
}

// heaviestWaiting counts out and returns the connection to shed for a new
// one of client when the total cap is reached: among the waiting
// connections, one of the client holding the most (the newcomer's client
// counted with the newcomer, and preferred on a tie), the one that has
// waited longest; nil when none waits, or when every client with a waiting
// connection holds fewer than the newcomer's client would.
func (l *Limiter) heaviestWaiting(client netip.Addr) net.Conn {
	other := 0 // connections that are not IP ones: one client, not in byClient
	for _, e := range l.conns {
		if !e.client.IsValid() {
			other++
		}
	}
	held := func(c netip.Addr) int {
		n := l.byClient[c]
		if !c.IsValid() {
			n = other
		}
		if c == client {
			n++
		}
		return n
	}
	var (
		best    net.Conn
		bestAt  time.Time
		bestN   int
		bestOwn bool
	)
	for c, e := range l.conns {
		if !e.waiting {
			continue
		}
		n, own := held(e.client), e.client == client
		switch {
		case best == nil || n > bestN:
		case n < bestN:
			continue
		case own != bestOwn:
			if !own {
				continue
			}
		case !e.since.Before(bestAt):
			continue
		}
		best, bestAt, bestN, bestOwn = c, e.since, n, own
	}
	if best == nil || bestN < held(client) {
		return nil
	}
	l.forget(best)
	return best
}

// forget counts c out, with l.mu held.
func (l *Limiter) forget(c net.Conn) {
	e, ok := l.conns[c]
	if !ok {
		return
	}
	delete(l.conns, c)
	if e.client.IsValid() {
		if l.byClient[e.client]--; l.byClient[e.client] <= 0 {
			delete(l.byClient, e.client)
		}
	}
}

// ConnState follows the connections of the server: set it as (or call it
// from) the server's http.Server.ConnState.
func (l *Limiter) ConnState(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch state {
	case http.StateClosed, http.StateHijacked:
		l.forget(c)
	case http.StateActive:
		if e, ok := l.conns[c]; ok {
			e.waiting = false
		}
	case http.StateIdle:
		if e, ok := l.conns[c]; ok {
			e.waiting, e.since = true, time.Now()
		}
	}
}

// addrOf is the IP address c comes from; invalid when c is not an IP
// connection.
func addrOf(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// ClientKey is the client an address counts for: an IPv4 address itself,
// an IPv6 address's /64 prefix (its first address), since one host may
// hold a whole /64; ip as it is when invalid. Other per-client caps
// (filehttp's revocations) count clients the same way.
func ClientKey(ip netip.Addr) netip.Addr {
	ip = ip.Unmap()
	if !ip.Is6() {
		return ip
	}
	return netip.PrefixFrom(ip, 64).Masked().Addr()
}
