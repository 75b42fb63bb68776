package httpguard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeDNS is a resolver the test controls: it answers addrs for "lb", or
// hangs until the lookup's deadline while stalled, as a slow DNS server
// would; it counts its lookups.
type fakeDNS struct {
	mu      sync.Mutex
	addrs   []netip.Addr
	stalled bool
	lookups atomic.Int64
}

func (d *fakeDNS) lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	d.lookups.Add(1)
	d.mu.Lock()
	addrs, stalled := d.addrs, d.stalled
	d.mu.Unlock()
	if stalled {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return addrs, nil
}

func (d *fakeDNS) set(stalled bool, addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stalled, d.addrs = stalled, nil
	for _, a := range addrs {
		d.addrs = append(d.addrs, netip.MustParseAddr(a))
	}
}

// fromProxy is a request from peer naming client in X-Forwarded-For.
func fromProxy(peer, client string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = peer + ":5000"
	r.Header.Set("X-Forwarded-For", client)
	return r
}

// A proxy named by host name is looked up in the background, never on a
// request's path: with the DNS server hanging, requests are answered at
// once (the name not trusted yet); once it answers, the name's address is
// trusted; when the name moves, trust moves with it at the next lookup; a
// failed lookup keeps the last addresses.
func TestTrustedProxyNamesResolvedInTheBackground(t *testing.T) {
	p, err := ParseTrustedProxies([]string{"lb"})
	if err != nil {
		t.Fatal(err)
	}
	dns := &fakeDNS{}
	dns.set(true)
	p.lookup, p.every = dns.lookup, 50*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() { cancel(); <-done })

	for deadline := time.Now().Add(5 * time.Second); dns.lookups.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the name was never looked up")
		}
	}
	start := time.Now()
	for range 20 {
		if got := p.ClientAddr(fromProxy("10.9.9.9", "198.51.100.1")); got != "10.9.9.9" {
			t.Fatalf("before the name resolved: client %q, want the peer", got)
		}
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("20 requests took %v while the DNS server hung: the lookup is on the request path", took)
	}

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 15 s", what)
			}
		}
	}
	dns.set(false, "10.9.9.9")
	waitFor("the answered address trusted", func() bool { return p.ClientAddr(fromProxy("10.9.9.9", "198.51.100.1")) == "198.51.100.1" })
	dns.set(false, "10.9.9.10")
	waitFor("trust moved to the new address", func() bool { return p.ClientAddr(fromProxy("10.9.9.10", "198.51.100.1")) == "198.51.100.1" })
	if got := p.ClientAddr(fromProxy("10.9.9.9", "198.51.100.1")); got != "10.9.9.9" {
		t.Errorf("the name's old address is still trusted: client %q", got)
	}
	dns.set(true)
	n := dns.lookups.Load()
	waitFor("a failed lookup", func() bool { return dns.lookups.Load() > n+1 })
	if got := p.ClientAddr(fromProxy("10.9.9.10", "198.51.100.1")); got != "198.51.100.1" {
		t.Errorf("after a failed lookup the last address is no longer trusted: client %q", got)
	}

	// Without Run, requests never look anything up.
	idle, _ := ParseTrustedProxies([]string{"lb"})
	quiet := &fakeDNS{}
	idle.lookup = quiet.lookup
	for range 10 {
		idle.ClientAddr(fromProxy("10.9.9.9", "198.51.100.1"))
	}
	if quiet.lookups.Load() != 0 {
		t.Errorf("requests looked the name up %d times", quiet.lookups.Load())
	}
}
