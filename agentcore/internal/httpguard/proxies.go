package httpguard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// proxyResolveEvery is how long the addresses of a proxy named by host name
// (a compose service, say) are used before they are looked up again.
const proxyResolveEvery = 30 * time.Second

// TrustedProxies is AGENT_TRUSTED_PROXIES: the load balancers and reverse
// proxies whose X-Forwarded-For header is believed. Each entry is an IP
// address, a CIDR prefix, or a host name looked up every 30 s (the balancer's
// service name in a compose network). A request from anywhere else is taken
// at its own address, whatever X-Forwarded-For it sends.
type TrustedProxies struct {
	prefixes []netip.Prefix
	names    []string

	mu       sync.Mutex
	resolved []netip.Addr // the names' addresses
	at       time.Time    // when they were looked up
}

// ParseTrustedProxies reads the entries of AGENT_TRUSTED_PROXIES; nil means
// none is trusted.
func ParseTrustedProxies(entries []string) (*TrustedProxies, error) {
	p := &TrustedProxies{}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case strings.Contains(e, "/"):
			pfx, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR prefix such as 10.0.0.0/8: %v", e, err)
			}
			p.prefixes = append(p.prefixes, pfx.Masked())
		default:
			if ip, err := netip.ParseAddr(e); err == nil {
				p.prefixes = append(p.prefixes, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			} else if validHostName(e) {
				p.names = append(p.names, e)
			} else {
				return nil, fmt.Errorf("%q is neither an IP address, a CIDR prefix nor a host name", e)
			}
		}
	}
	if len(p.prefixes) == 0 && len(p.names) == 0 {
		return nil, nil
	}
	return p, nil
}

// validHostName reports whether s looks like a DNS host name.
func validHostName(s string) bool {
	if len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Trusts reports whether ip is one of the proxies.
func (p *TrustedProxies) Trusts(ctx context.Context, ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, pfx := range p.prefixes {
		if pfx.Contains(ip) {
			return true
		}
	}
	if len(p.names) == 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.at) >= proxyResolveEvery {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		var addrs []netip.Addr
		for _, name := range p.names {
			ips, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", name) // a name that does not resolve trusts nobody
			for _, a := range ips {
				addrs = append(addrs, a.Unmap())
			}
		}
		p.resolved, p.at = addrs, time.Now()
	}
	for _, a := range p.resolved {
		if a == ip {
			return true
		}
	}
	return false
}

// ClientAddr is the address r came from: its peer's, or, when the peer is a
// trusted proxy, the last address in X-Forwarded-For that is not one (the
// entries before it are the client's own claims, and anyone may write them).
func (p *TrustedProxies) ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if p == nil || err != nil || !p.Trusts(r.Context(), peer) {
		return host
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	client := host
	for i := len(hops) - 1; i >= 0; i-- {
		ip, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // garbage: stop at the last address a trusted proxy vouched for
		}
		client = ip.Unmap().String()
		if !p.Trusts(r.Context(), ip) {
			break
		}
	}
	return client
}
