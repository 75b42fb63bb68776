package connlimit

import (
	"net"
	"net/http"
	"net/netip"
	"testing"
)

// fakeConn is a connection from addr that records being closed; only
// RemoteAddr and Close are used by the Limiter.
type fakeConn struct {
	net.Conn
	addr   netip.Addr
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr {
	return net.TCPAddrFromAddrPort(netip.AddrPortFrom(c.addr, 40000))
}

func (c *fakeConn) Close() error { c.closed = true; return nil }

// open admits a connection from ip, which then waits for a request.
func open(t *testing.T, l *Limiter, ip string) (*fakeConn, bool) {
	t.Helper()
	c := &fakeConn{addr: netip.MustParseAddr(ip)}
	return c, l.admit(c)
}

// At the total cap the client over its fair share loses a waiting
// connection, not the client whose single connection happens to be the
// oldest; a client holding fewer than the newcomer's would is never shed
// for it, and the newcomer's own client goes first when it is the largest.
func TestTotalCapShedsTheHeaviestClient(t *testing.T) {
	l := New(Config{Max: 4})
	light, _ := open(t, l, "192.0.2.1") // the oldest connection of all
	var heavy []*fakeConn
	for range 3 {
		c, _ := open(t, l, "192.0.2.2")
		heavy = append(heavy, c)
	}
	fresh, ok := open(t, l, "192.0.2.3")
	if !ok {
		t.Fatal("a new client was refused at the total cap while a heavy one waits")
	}
	if light.closed {
		t.Error("the light client's only connection was shed for the new client; the heavy client holds 3 of 4")
	}
	if !heavy[0].closed || heavy[1].closed || heavy[2].closed {
		t.Errorf("heavy client's connections closed: %v %v %v, want only its oldest", heavy[0].closed, heavy[1].closed, heavy[2].closed)
	}
	// Now 1+2+1: the heavy client, reconnecting, loses its own.
	again, ok := open(t, l, "192.0.2.2")
	if !ok || !heavy[1].closed || light.closed || fresh.closed {
		t.Errorf("the heavy client reconnecting: admitted %v, its own oldest shed %v, others shed %v %v", ok, heavy[1].closed, light.closed, fresh.closed)
	}
	// The heavy client and the newcomer's client busy: the newcomer's client
	// would hold 2, the only waiting connection is a client's holding 1,
	// which is not shed for it, so the newcomer is refused.
	l.ConnState(heavy[2], http.StateActive)
	l.ConnState(again, http.StateActive)
	l.ConnState(fresh, http.StateActive)
	if _, ok := open(t, l, "192.0.2.3"); ok {
		t.Error("a client that would hold 2 of 4 took the place of a client holding 1")
	}
	if light.closed || fresh.closed {
		t.Error("a connection was shed for a refused newcomer")
	}
}

// An IPv6 client is its /64: the addresses of one prefix share the
// per-client cap, another prefix has its own; IPv4 addresses are apart.
func TestClientIsIPv6Slash64(t *testing.T) {
	l := New(Config{PerClient: 2})
	a, _ := open(t, l, "2001:db8:1:2::1")
	b, _ := open(t, l, "2001:db8:1:2:ffff::9")
	if _, ok := open(t, l, "2001:db8:1:2:abcd::42"); !ok || !a.closed || b.closed {
		t.Errorf("a third connection from one /64: admitted %v, oldest shed %v, younger shed %v; want the /64's oldest shed", ok, a.closed, b.closed)
	}
	if c, ok := open(t, l, "2001:db8:1:3::1"); !ok || c.closed || b.closed {
		t.Error("a connection of another /64 was counted with the first")
	}
	v4a, _ := open(t, l, "192.0.2.10")
	open(t, l, "192.0.2.11")
	open(t, l, "192.0.2.12")
	if v4a.closed {
		t.Error("IPv4 addresses of one /24 were counted as one client")
	}
	if got := ClientKey(netip.MustParseAddr("::ffff:192.0.2.1")); got != netip.MustParseAddr("192.0.2.1") {
		t.Errorf("an IPv4-mapped address counts as %v", got)
	}
}
