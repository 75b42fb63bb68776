package transfer

import "strings"

// SplitList splits a list setting — AGENT_FETCH_ALLOW_HOSTS,
// AGENT_PEER_URLS, a host's allow list — at sep, trims each item and drops
// empty ones, so "a, b,," is [a b] and "" is nil.
func SplitList(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
