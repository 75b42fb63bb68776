package mcpbind

import (
	"context"
	"net/http"
	"sync"

	"github.com/agentura/agentura/fileserve"
)

// headerRequestContext carries, from the HTTP handler to the MCP tool
// handler, the key of the HTTP request's context. The go-sdk runs a tool
// call under the context of its MCP session, not of the HTTP request; a
// request served statelessly (2026-07-28, or AGENT_MCP_STATELESS) is its own
// session, and a client that drops the request (the cancellation of
// 2026-07-28 over HTTP, the only one there is without a session) must stop
// the call. The header
// is set here and only here: one sent by a client is removed.
const headerRequestContext = "X-Agentura-Request-Context"

// requestContexts are the contexts of the stateless MCP requests in flight.
type requestContexts struct {
	m sync.Map // key → context.Context
}

// linkRequestContexts records the context of each MCP POST served
// statelessly for the tool call it carries (callContext).
func (s *Server) linkRequestContexts(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(headerRequestContext)
		if r.Method != http.MethodPost || !s.servedStateless(r) {
			h.ServeHTTP(w, r)
			return
		}
		key := fileserve.NewID()
		r.Header.Set(headerRequestContext, key)
		s.requests.m.Store(key, r.Context())
		defer s.requests.m.Delete(key)
		h.ServeHTTP(w, r)
	})
}

// callContext returns ctx, ended also when the HTTP request that carried a
// stateless call ends; stop releases it.
func (s *Server) callContext(ctx context.Context, header http.Header) (_ context.Context, stop func()) {
	if header == nil {
		return ctx, func() {}
	}
	key := header.Get(headerRequestContext)
	v, _ := s.requests.m.Load(key)
	httpCtx, ok := v.(context.Context)
	if key == "" || !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	unlink := context.AfterFunc(httpCtx, func() { cancel(context.Cause(httpCtx)) })
	return ctx, func() { unlink(); cancel(nil) }
}
