package transfer

import (
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// loopbackNames are the names of this machine's loopback interface that
// SameOrigin counts as one host: an agent whose AGENT_PUBLIC_URL says
// http://localhost:8001 and that a host reaches as http://127.0.0.1:8001 is
// the same agent (a compose deployment seen from its host). The list is
// explicit and short on purpose: other addresses of 127.0.0.0/8, "localhost."
// and IPv4-mapped forms are other hosts.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// SameOrigin reports whether a and b lie on the same origin: the one rule
// for where a bearer token may go and which download URLs need no allow
// list. The rule is exact:
//
//   - the schemes are equal and http or https (https → http is another
//     origin: no downgrade);
//   - the ports are equal, a missing port standing for the scheme's default
//     (http://h and http://h:80 are one origin; "080" is not "80");
//   - the hosts are equal after ASCII lower-casing, an IP literal in its
//     canonical form ([0:0::1] is [::1]), with localhost, 127.0.0.1 and ::1
//     counting as one host: an agent whose AGENT_PUBLIC_URL says localhost
//     and that a host reaches as 127.0.0.1 is the same agent, and all three
//     name this machine, so a token cannot leave it through them. Nothing
//     else is folded: "example.com." (trailing dot),
//     a punycode and a Unicode spelling of one name, or a Unicode look-alike
//     of an ASCII letter are other hosts. A refusal is the safe side: the
//     caller can still name such a host in an allow list.
//   - a URL with user information (http://agent@evil.example/,
//     http://user:pass@agent/) is on no origin: agents never hand such URLs
//     out, and one that does carry it is a trick or a mistake.
//
// A nil URL is on no origin.
func SameOrigin(a, b *url.URL) bool {
	oa, ok := originOf(a)
	if !ok {
		return false
	}
	ob, ok := originOf(b)
	return ok && oa == ob
}

// origin is a URL's origin, normalised for comparison.
type origin struct{ scheme, host, port string }

func originOf(u *url.URL) (origin, bool) {
	if u == nil || u.User != nil || u.Opaque != "" {
		return origin{}, false
	}
	scheme := asciiLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return origin{}, false
	}
	host := hostKey(u.Hostname())
	if host == "" {
		return origin{}, false
	}
	if slices.Contains(loopbackNames, host) {
		host = "loopback"
	}
	return origin{scheme, host, portOf(scheme, u.Port())}, true
}

// hostKey is host lower-cased (ASCII letters only) and, for an IP literal,
// in canonical form.
func hostKey(host string) string {
	host = asciiLower(host)
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.String()
	}
	return host
}

// portOf is port, or the default port of scheme when port is empty.
func portOf(scheme, port string) string {
	if port != "" {
		return port
	}
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// asciiLower lower-cases the ASCII letters of s and nothing else: Unicode
// case folding would make the Kelvin sign "K" (U+212A) a "k".
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// HostAllowed reports whether u is an http(s) URL on one of hosts: an entry
// "host" allows every port of that host, "host:port" (or "[::1]:8001") that
// port only, the scheme's default standing for a missing one. Hosts compare
// as in SameOrigin, except that loopback names are not aliases here: an
// allow list says exactly what it trusts. A URL with user information is
// never allowed.
func HostAllowed(hosts []string, u *url.URL) bool {
	o, ok := originOf(u)
	if !ok {
		return false
	}
	host := hostKey(u.Hostname())
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if eh, ep, err := net.SplitHostPort(h); err == nil {
			if hostKey(eh) == host && ep == o.port {
				return true
			}
			continue
		}
		if hostKey(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")) == host {
			return true
		}
	}
	return false
}
