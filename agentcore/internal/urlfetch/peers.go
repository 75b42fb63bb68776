package urlfetch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentura/agentura/settings"
	"github.com/agentura/agentura/transfer"
)

// PeerURL tells an agent where a peer agent is really reached when its public
// URLs are not reachable from here. Agents in one docker compose network hand
// out download URLs under their AGENT_PUBLIC_URL (http://localhost:8001, so the
// host can download), but inside the network localhost is the container
// itself and the peer is http://ocr-agent:8001. With the pair
// {Public: "http://localhost:8001", Internal: "http://ocr-agent:8001"} a URL
// input under the public base is fetched from the internal one instead (same
// path, same token), and for such fetches alone the internal host:port is
// let past the SSRF guard: a URL naming http://ocr-agent:8001 directly is
// refused as before.
type PeerURL struct {
	Public   string // base URL the peer hands out, e.g. http://localhost:8001
	Internal string // base URL it is reached at from here, e.g. http://ocr-agent:8001
}

// ParsePeerURLs reads the AGENT_PEER_URLS form: comma-separated
// PUBLIC=INTERNAL pairs such as
// "http://localhost:8001=http://ocr-agent:8001,http://localhost:8002=http://composer-agent:8002".
func ParsePeerURLs(s string) ([]PeerURL, error) {
	var out []PeerURL
	for _, pair := range settings.Split(s, ",") {
		public, internal, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not PUBLIC=INTERNAL (for example http://localhost:8001=http://ocr-agent:8001)", pair)
		}
		out = append(out, PeerURL{Public: strings.TrimSpace(public), Internal: strings.TrimSpace(internal)})
	}
	if _, err := compilePeers(out); err != nil {
		return nil, err
	}
	return out, nil
}

// peerRoute is one PeerURL, parsed.
type peerRoute struct {
	public, internal *url.URL
}

// peerMap rewrites URLs under a peer's public base to its internal one.
type peerMap []peerRoute

// CheckPeerURLs says what is wrong with peers, or nil.
func CheckPeerURLs(peers []PeerURL) error {
	_, err := compilePeers(peers)
	return err
}

// compilePeers parses and checks peers: both sides absolute http(s) base URLs
// without query or fragment.
func compilePeers(peers []PeerURL) (peerMap, error) {
	var m peerMap
	for _, p := range peers {
		pub, err := peerBase(p.Public)
		if err != nil {
			return nil, fmt.Errorf("public URL %q: %w", p.Public, err)
		}
		in, err := peerBase(p.Internal)
		if err != nil {
			return nil, fmt.Errorf("internal URL %q of %s: %w", p.Internal, p.Public, err)
		}
		m = append(m, peerRoute{public: pub, internal: in})
	}
	return m, nil
}

func peerBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("must be an absolute http(s) URL such as http://ocr-agent:8001")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("must be a base URL without user, query or fragment")
	}
	// host:port in lower case, the scheme's default port filled in, so that
	// http://Host and http://host:80 compare equal.
	u.Host = net.JoinHostPort(strings.ToLower(u.Hostname()), cmp.Or(u.Port(), map[string]string{"http": "80", "https": "443"}[u.Scheme]))
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// rewrite returns raw with a peer's public base replaced by its internal
// one, and whether it did.
func (m peerMap) rewrite(raw string) (string, bool) {
	if len(m) == 0 {
		return raw, false
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw, false
	}
	for _, r := range m {
		// The one origin rule: no user information, default ports filled in.
		if !transfer.SameOrigin(u, r.public) {
			continue
		}
		rest, ok := strings.CutPrefix(u.Path, r.public.Path)
		if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
			continue
		}
		out := *u
		out.Scheme, out.Host = r.internal.Scheme, r.internal.Host
		out.Path = r.internal.Path + rest
		// Keep the path's own escaping (%2F stays %2F) where the base allows.
		if rawRest, ok := strings.CutPrefix(u.EscapedPath(), r.public.EscapedPath()); ok {
			out.RawPath = r.internal.EscapedPath() + rawRest
		}
		return out.String(), true
	}
	return raw, false
}

// WithPeers makes f fetch peers' public URLs from their internal bases,
// through a client of their own whose dialer also reaches the peers'
// internal host:port pairs. Its connections are pooled apart from the main
// client's, so a URL naming http://ocr-agent:8001 directly still meets the
// SSRF guard and is refused. The peers were checked before (CheckPeerURLs).
func (f *Fetcher) WithPeers(peers []PeerURL) *Fetcher {
	m, _ := compilePeers(peers)
	if len(m) == 0 {
		return f
	}
	internal := map[string]bool{}
	for _, r := range m {
		internal[r.internal.Host] = true
	}
	t := f.client.Transport.(*http.Transport).Clone()
	guarded := t.DialContext
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if internal[strings.ToLower(addr)] {
			return f.dialer.DialContext(ctx, network, addr)
		}
		return guarded(ctx, network, addr)
	}
	pc := *f.client
	pc.Transport = t
	f.peers, f.peer = m, &pc
	return f
}

// ClientFor returns the client that fetches rawURL and the URL to fetch: a
// peer's public URL goes to its internal base through the peer client.
func (f *Fetcher) ClientFor(rawURL string) (*http.Client, string) {
	if out, ok := f.peers.rewrite(rawURL); ok {
		return f.peer, out
	}
	return f.client, rawURL
}
