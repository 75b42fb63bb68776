// Package urlfetch fetches the URLs a call names behind the guard against
// server-side request forgery (SSRF): only public addresses, unless a host is
// allowed (AGENT_FETCH_ALLOW_HOSTS) or is a peer agent's internal base
// (AGENT_PEER_URLS).
package urlfetch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/agentura/agentura/transfer"
)

// maxRedirects is how many redirects a fetch follows; each hop is checked
// against the SSRF guard again.
const maxRedirects = 5

// blockedPrefixes are address ranges a fetch never reaches unless the host is
// allowed explicitly: loopback, private, link-local (cloud metadata lives at
// 169.254.169.254), carrier-grade NAT, multicast, documentation and reserved
// ranges, for IPv4 and IPv6.
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/96", "::1/128", "64:ff9b::/96", "2001::/32", "2002::/16", "64:ff9b:1::/48", "100::/64", "2001:db8::/32",
		"fc00::/7", "fe80::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// blockedReason says why ip may not be fetched from, or "" if it may.
func blockedReason(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local (cloud metadata)"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast():
		return "multicast"
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return "reserved (" + p.String() + ")"
		}
	}
	return ""
}

// SSRFError is the error of a fetch refused by the guard against server-side
// request forgery.
type SSRFError struct {
	Host   string
	IP     string
	Reason string
}

// Error says which address was refused, why, and how to allow it.
func (e *SSRFError) Error() string {
	return fmt.Sprintf("refused to fetch from %s: its address %s is %s; the agent only fetches from public addresses unless the host is listed in AGENT_FETCH_ALLOW_HOSTS (a peer agent's public URL: map it with AGENT_PEER_URLS)", e.Host, e.IP, e.Reason)
}

// Fetcher fetches foreign URLs behind the SSRF guard.
type Fetcher struct {
	client *http.Client
	dialer *net.Dialer     // dials what the guard accepts; the peer client dials with it too
	allow  map[string]bool // hosts and host:port pairs allowed although private
	peers  peerMap         // AGENT_PEER_URLS: peers' public URLs fetched from internal ones (peers.go)
	peer   *http.Client    // fetches them: dials the peers' internal host:port pairs; its own connection pool
}

// New returns a fetcher that reaches private addresses only at allowHosts
// (hosts or host:port pairs, AGENT_FETCH_ALLOW_HOSTS) and gives up on a
// fetch after timeout (AGENT_FETCH_TIMEOUT).
func New(allowHosts []string, timeout time.Duration) *Fetcher {
	f := &Fetcher{
		dialer: &net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second},
		allow:  map[string]bool{},
	}
	for _, h := range allowHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
			h = h[1 : len(h)-1] // "[::1]" is the host ::1
		}
		if h != "" {
			f.allow[h] = true
		}
	}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would reach what the guard refuses
		DialContext:           f.guardedDial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	}
	f.client = &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("refused redirect to a %s: URL; only http and https are fetched", req.URL.Scheme)
			}
			return nil
		},
	}
	return f
}

func (f *Fetcher) allowed(hostport string) bool {
	hostport = strings.ToLower(hostport)
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return f.allow[hostport] || f.allow[host]
}

// guardedDial resolves the host itself and dials only addresses the guard
// accepts, so a DNS answer cannot change between the check and the dial.
func (f *Fetcher) guardedDial(ctx context.Context, network, addr string) (net.Conn, error) {
	if f.allowed(addr) {
		conn, err := f.dialer.DialContext(ctx, network, addr)
		return conn, unresolved(err)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, unresolved(err)
	}
	var refused error
	for _, ip := range ips {
		if reason := blockedReason(ip); reason != "" {
			if refused == nil {
				refused = &SSRFError{Host: host, IP: ip.Unmap().String(), Reason: reason}
			}
			continue
		}
		conn, err := f.dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		refused = err
	}
	return nil, cmp.Or(refused, fmt.Errorf("no address found for %s", host))
}

// hostError is the error of a URL whose host name could not be resolved.
// Its text names the host and why, never the resolver's address (the
// net package's says "lookup example.org on 10.0.0.2:53: ..."), since it
// reaches the model; the DNS error stays in the chain for errors.As.
type hostError struct {
	Host string
	Err  *net.DNSError
}

// Error names the host and why it could not be resolved.
func (e *hostError) Error() string {
	why := "no such host"
	switch {
	case e.Err.IsTimeout:
		why = "the name server did not answer in time"
	case e.Err.IsTemporary && !e.Err.IsNotFound:
		why = "the name server failed; it may work again later"
	}
	return fmt.Sprintf("the host name %s could not be resolved (%s): check the URL's host", e.Host, why)
}

// Unwrap returns the DNS error.
func (e *hostError) Unwrap() error { return e.Err }

// unresolved turns a DNS failure in err into a hostError; other errors
// are returned as they are.
func unresolved(err error) error {
	if dns, ok := errors.AsType[*net.DNSError](err); ok {
		return &hostError{Host: dns.Name, Err: dns}
	}
	return err
}

// traceContext writes the W3C trace context of a fetch's span (the call's
// "resolve file input") into its request's traceparent and tracestate
// headers, so that a server that continues traces (a peer agent's file
// routes) puts its span under it. Baggage is not sent: its values are the
// caller's, and a fetched URL may be anyone's.
var traceContext = propagation.TraceContext{}

// Get starts a GET of rawURL, with the trace context of ctx in its
// traceparent header. The caller closes the body.
func (f *Fetcher) Get(ctx context.Context, rawURL string) (*http.Response, error) {
	client, rawURL := f.ClientFor(rawURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // it repeats the URL, password and all
		}
		return nil, fmt.Errorf("bad URL %q: %w", transfer.Redact(rawURL), err)
	}
	req.Header.Set("User-Agent", "agentura-fetch/1")
	traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := client.Do(req)
	if err != nil {
		if ssrf, ok := errors.AsType[*SSRFError](err); ok {
			return nil, ssrf
		}
		return nil, fmt.Errorf("fetch %s: %w", transfer.Redact(rawURL), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		return nil, fmt.Errorf("fetch %s: the server answered %s", transfer.Redact(rawURL), resp.Status)
	}
	return resp, nil
}
