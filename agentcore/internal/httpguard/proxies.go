package httpguard

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// proxyResolveEvery is how long the addresses of a proxy named by host name
// (a compose service, say) are used before they are looked up again;
// proxyRetryEvery is that while a name has none (the balancer not up yet).
const (
	proxyResolveEvery = 30 * time.Second
	proxyRetryEvery   = 2 * time.Second
	proxyLookupWait   = 5 * time.Second // one lookup's time limit
)

// TrustedProxies is AGENT_TRUSTED_PROXIES: the load balancers and reverse
// proxies whose X-Forwarded-For header is believed. Each entry is an IP
// address, a CIDR prefix, or a host name (the balancer's service name in a
// compose network). A request from anywhere else is taken at its own
// address, whatever X-Forwarded-For it sends.
//
// Names are looked up in the background (Run: at start, then every 30 s),
// never on a request's or a connection's path, so a slow DNS server delays
// no request; until a name's first answer, its addresses are not trusted,
// and a failed lookup keeps the addresses of the last answer.
type TrustedProxies struct {
	prefixes []netip.Prefix
	names    []string

	// lookup resolves a name: net.DefaultResolver's, unless a test sets it.
	lookup func(ctx context.Context, name string) ([]netip.Addr, error)
	// every is proxyResolveEvery; tests shorten it.
	every    time.Duration
	resolved atomic.Pointer[map[string][]netip.Addr] // name → its addresses
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
	p.every = proxyResolveEvery
	p.lookup = func(ctx context.Context, name string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", name)
	}
	return p, nil
}

// hostNameChars are the characters of a host name's labels.
const hostNameChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"

// validHostName reports whether s looks like a DNS host name.
func validHostName(s string) bool {
	if len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' || strings.Trim(label, hostNameChars) != "" {
			return false
		}
	}
	return true
}

// Trusts reports whether ip is one of the proxies, by the names'
// addresses last looked up: it never waits for DNS.
func (p *TrustedProxies) Trusts(ip netip.Addr) bool {
	ip = ip.Unmap()
	if slices.ContainsFunc(p.prefixes, func(pfx netip.Prefix) bool { return pfx.Contains(ip) }) {
		return true
	}
	if r := p.resolved.Load(); r != nil {
		for _, addrs := range *r {
			if slices.Contains(addrs, ip) {
				return true
			}
		}
	}
	return false
}

// Run looks the names up until ctx is done: at once, then every p.every,
// or every proxyRetryEvery while a name has no address. It returns at once
// when there are no names.
func (p *TrustedProxies) Run(ctx context.Context, log *slog.Logger) {
	if p == nil || len(p.names) == 0 {
		return
	}
	for {
		wait := p.every
		if missing := p.refresh(ctx); len(missing) > 0 {
			log.Warn("AGENT_TRUSTED_PROXIES: host names without an address yet; requests through them are taken at the proxy's address until they resolve",
				"names", missing)
			wait = min(wait, proxyRetryEvery)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// refresh looks up every name once, keeping a name's last addresses when
// its lookup fails, and returns the names that have none.
func (p *TrustedProxies) refresh(ctx context.Context) (missing []string) {
	next := map[string][]netip.Addr{}
	last := p.resolved.Load()
	for _, name := range p.names {
		lctx, cancel := context.WithTimeout(ctx, proxyLookupWait)
		ips, err := p.lookup(lctx, name)
		cancel()
		var addrs []netip.Addr
		for _, a := range ips {
			addrs = append(addrs, a.Unmap())
		}
		if (err != nil || len(addrs) == 0) && last != nil {
			addrs = (*last)[name]
		}
		if len(addrs) == 0 {
			missing = append(missing, name)
		}
		next[name] = addrs
	}
	p.resolved.Store(&next)
	return missing
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
	if p == nil || err != nil || !p.Trusts(peer) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	client := host
	for i := len(hops) - 1; i >= 0; i-- {
		ip, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // garbage: stop at the last address a trusted proxy vouched for
		}
		client = ip.Unmap().String()
		if !p.Trusts(ip) {
			break
		}
	}
	return client
}
