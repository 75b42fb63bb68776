package httpguard

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestClientAddrTrustsOnlyConfiguredProxies(t *testing.T) {
	proxies, err := ParseTrustedProxies([]string{"10.0.0.0/8", "192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ peer, xff, want string }{
		{"198.51.100.9:1234", "203.0.113.5", "198.51.100.9"},       // untrusted peer: header ignored
		{"10.1.2.3:1234", "203.0.113.5", "203.0.113.5"},            // trusted proxy
		{"10.1.2.3:1234", "203.0.113.5, 192.0.2.1", "203.0.113.5"}, // two trusted hops
		{"10.1.2.3:1234", "6.6.6.6, 203.0.113.5", "203.0.113.5"},   // a forged first entry does not count
		{"10.1.2.3:1234", "", "10.1.2.3"},                          // no header: the proxy itself
		{"[::ffff:10.1.2.3]:1234", "203.0.113.7", "203.0.113.7"},   // IPv4-mapped peer
	} {
		r := httptest.NewRequest("GET", "/mcp", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := proxies.ClientAddr(r); got != c.want {
			t.Errorf("peer %s XFF %q: got %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
}

func TestRateLimiterEvictsIdleOwners(t *testing.T) {
	l := &RateLimiter{limit: 10, burst: 20, owners: map[string]*ownerRate{}}
	now := time.Now()
	for i := range maxRateOwners {
		l.allow(string(rune(i)), now)
	}
	l.allow("new", now.Add(time.Minute))
	if len(l.owners) != 1 {
		t.Errorf("after a minute idle, %d owners kept, want only the new one", len(l.owners))
	}
}
