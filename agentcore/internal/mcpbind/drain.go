package mcpbind

import (
	"context"
	"net/http"

	"github.com/agentura/agentura/transfer"
)

// drainable ends the standing MCP streams when shutdown begins, so shutdown
// does not wait on them: GET /mcp of a session (which lasts as long as the
// session) and a 2026-07-28 subscriptions/listen (which lasts until the
// client ends it; its method is in the Mcp-Method header, which the go-sdk
// checks against the body). Tool calls are not cut: they finish within
// ShutdownTimeout and their results reach the caller, as do downloads in
// flight.
func (s *Server) drainable(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Header.Get(transfer.HeaderMCPMethod) != methodListen {
			h.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(s.Draining, cancel)
		defer stop()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
