package httpguard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestTrustedProxiesClientAddress(t *testing.T) {
	p, err := ParseTrustedProxies([]string{"10.0.0.0/8", "192.168.1.7", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if missing := p.refresh(t.Context()); len(missing) > 0 {
		t.Fatalf("%v did not resolve", missing)
	}
	for _, c := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"untrusted peer: its own address, X-Forwarded-For ignored", "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"trusted peer: the client it names", "10.1.2.3:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a forged entry before the real client stays a claim", "10.1.2.3:5000", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1"},
		{"a chain of trusted proxies is walked back", "192.168.1.7:5000", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"split over several headers", "10.1.2.3:5000", []string{"6.6.6.6", "198.51.100.1"}, "198.51.100.1"},
		{"a host name's addresses are trusted", "127.0.0.1:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"garbage stops the walk at the last vouched address", "10.1.2.3:5000", []string{"198.51.100.1, junk, 10.2.2.2"}, "10.2.2.2"},
		{"trusted peer without the header", "10.1.2.3:5000", nil, "10.1.2.3"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.peer
		for _, h := range c.xff {
			r.Header.Add("X-Forwarded-For", h)
		}
		if got := p.ClientAddr(r); got != c.want {
			t.Errorf("%s: client %q, want %q", c.name, got, c.want)
		}
	}
	var none *TrustedProxies
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr, r.Header["X-Forwarded-For"] = "10.1.2.3:5000", []string{"198.51.100.1"}
	if got := none.ClientAddr(r); got != "10.1.2.3" {
		t.Errorf("without AGENT_TRUSTED_PROXIES: client %q, want the peer", got)
	}
	for _, bad := range []string{"10.0.0.0/33", "not a host!", "-x.example"} {
		if _, err := ParseTrustedProxies([]string{bad}); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted it", bad)
		}
	}
}
