package httpguard

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/internal/lib/mcptrace"
)

// Origin protects /a2a, /uploads and the agent card from browsers:
//   - DNS rebinding: on a connection to a loopback address, a Host that is
//     neither loopback nor AGENT_PUBLIC_URL's host is refused, as the go-sdk
//     refuses it on /mcp (a page on evil.example whose name now points at
//     127.0.0.1 sends Host: evil.example);
//   - cross-site requests: a request that changes something (any method but
//     GET, HEAD and OPTIONS) carrying an Origin that is neither the agent
//     itself (the Host it was sent to, or AGENT_PUBLIC_URL) nor one of
//     AGENT_ALLOWED_ORIGINS is refused (a form post to /uploads needs no
//     CORS preflight). Clients that are not browsers send no Origin.
type Origin struct {
	publicHost string   // AGENT_PUBLIC_URL's host[:port], lower case
	publicOrig string   // AGENT_PUBLIC_URL's scheme://host[:port]
	allowed    []string // AGENT_ALLOWED_ORIGINS, normalised
}

// NewOrigin returns the guard for an agent reached at publicURL
// (AGENT_PUBLIC_URL, may be empty) whose endpoints the web applications at
// allowedOrigins (AGENT_ALLOWED_ORIGINS) may use.
func NewOrigin(publicURL string, allowedOrigins []string) *Origin {
	g := &Origin{}
	if u, err := url.Parse(publicURL); err == nil {
		g.publicHost = strings.ToLower(u.Host)
		g.publicOrig = strings.ToLower(u.Scheme + "://" + u.Host)
	}
	for _, o := range allowedOrigins {
		g.allowed = append(g.allowed, strings.ToLower(strings.TrimRight(o, "/")))
	}
	return g
}

// Wrap returns next behind the guard.
func (g *Origin) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := g.refusal(r); msg != "" {
			httpjson.WriteError(w, http.StatusForbidden, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refusal says why r is refused, or "".
func (g *Origin) refusal(r *http.Request) string {
	if msg := g.HostRefusal(r); msg != "" {
		return msg
	}
	host := strings.ToLower(r.Host)
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return ""
	}
	origin := strings.ToLower(strings.TrimRight(r.Header.Get("Origin"), "/"))
	if origin == "" {
		return ""
	}
	if u, err := url.Parse(origin); err == nil && u.Host == host && (u.Scheme == "http" || u.Scheme == "https") {
		return "" // same origin
	}
	if origin == g.publicOrig || slices.Contains(g.allowed, origin) {
		return ""
	}
	return "cross-site request from Origin " + quoteShort(r.Header.Get("Origin")) + " refused; if this web application may use the agent, add its origin to AGENT_ALLOWED_ORIGINS"
}

// HostRefusal says why r's Host is refused (DNS rebinding), or "".
func (g *Origin) HostRefusal(r *http.Request) string {
	host := strings.ToLower(r.Host)
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		if isLoopbackHost(local.String()) && !isLoopbackHost(host) && host != g.publicHost {
			return "Host " + quoteShort(r.Host) + " is not this agent's: an agent listening on a loopback address answers only requests for localhost, a loopback address or AGENT_PUBLIC_URL's host (DNS rebinding protection); set AGENT_PUBLIC_URL to the name clients use"
		}
	}
	return ""
}

// isLoopbackHost reports whether host[:port] names localhost or a loopback IP.
func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// quoteShort quotes s for a message, cut to 100 bytes.
func quoteShort(s string) string {
	return `"` + strings.ToValidUTF8(mcptrace.Truncate(s, 100), "?") + `"`
}
