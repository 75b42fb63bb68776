package transport

import (
	"net/http"
	"sync"

	"github.com/agentura/agentura/fileserve"
)

// The inline files of a request (the inline pass) are staged for the request
// and removed once it is answered. A tools/call answered with a task is
// answered before its tool has read them: the task takes them over, and
// removes them when it ends.

// headerInlineStaged carries, from the inline pass to the tools/call
// handler, the key under which the request's staged inline files wait to
// be taken over. Set by the inline pass alone: a client's own is removed.
const headerInlineStaged = "X-Agentura-Inline-Staged"

// inlineClaims are the staged inline files of the MCP requests in flight,
// by key.
type inlineClaims struct {
	passes sync.Map // key → *inlinePass
}

// offer makes p's files claimable by the handling of r, and returns what
// the request's end does: remove them, unless they were claimed.
func (c *inlineClaims) offer(r *http.Request, p *inlinePass) func() {
	if len(p.staged) == 0 {
		return func() {}
	}
	key := fileserve.NewID()
	r.Header.Set(headerInlineStaged, key)
	c.passes.Store(key, p)
	return func() {
		if _, unclaimed := c.passes.LoadAndDelete(key); unclaimed {
			p.discard()
		}
	}
}

// Claim takes over the staged inline files of the request whose header is
// h (a tools/call answered with a task): they are the caller's to remove.
func (ip *InlinePass) Claim(h http.Header) []fileserve.Meta {
	if p, ok := ip.claims.passes.LoadAndDelete(h.Get(headerInlineStaged)); ok {
		return p.(*inlinePass).staged
	}
	return nil
}
