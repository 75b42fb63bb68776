package agentcore

import (
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/httpguard"
	"github.com/agentura/agentura/agentcore/internal/transport"
	"github.com/agentura/agentura/transfer"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// mcpBodyOverhead is what a JSON-RPC request adds around an inline file.
const mcpBodyOverhead = 1 << 20

// Handler returns the agent's HTTP handler, the same on every call.
func (s *Service) Handler() http.Handler {
	s.handlerOnce.Do(func() { s.handler = s.buildHandler() })
	return s.handler
}

// quietGin keeps gin from printing its debug banner and every route to
// stdout, which carries the protocol under --stdio. gin decides that from a
// package global and offers no per-engine switch, so the global is set once,
// and only while it still holds gin's own default (GIN_MODE unset, not under
// go test): a program that chose a mode keeps it.
var quietGin = sync.OnceFunc(func() {
	if gin.IsDebugging() && os.Getenv(gin.EnvGinMode) == "" {
		gin.SetMode(gin.ReleaseMode)
	}
})

// buildHandler builds the handler Handler returns.
func (s *Service) buildHandler() http.Handler {
	quietGin()
	r := gin.New()
	r.Use(gin.Recovery(), s.requestLog())

	// An inline file arrives as base64 (4/3 of its size) inside JSON-RPC.
	bodyLimit := s.cfg.MaxUploadBytes/3*4 + 4 + mcpBodyOverhead
	// Each owner's requests are rate limited (httpguard.RateLimiter): the
	// caller once verified, else the client address; bodies must keep
	// flowing (httpguard.BodyPacer). The bindings do the rest: inline files
	// staged as the body arrives, each body read once, strictly, and its
	// scopes checked (mcpbind.Server.Handler).
	var mcpH http.Handler = s.limiter.Wrap(s.pacer.Wrap(s.mcp.Handler(bodyLimit)))
	var uploadH http.Handler = s.limiter.Wrap(s.pacer.Wrap(s.callers.RequireScope(callers.ScopeFilesWrite, http.HandlerFunc(s.files.ServeUpload))))
	// tusd keeps its own read deadlines on PATCH bodies (extended as bytes
	// arrive), so tus is rate limited but not paced.
	var tusH http.Handler = s.limiter.Wrap(s.callers.RequireScope(callers.ScopeFilesWrite, s.tus))
	a2aH := s.limiter.Wrap(s.pacer.Wrap(s.a2a.Handler(bodyLimit)))
	mcpH, uploadH, tusH, a2aH = s.callers.Require(mcpH), s.callers.Require(uploadH), s.callers.Require(tusH), s.callers.Require(a2aH)
	guard := httpguard.NewOrigin(s.cfg.PublicURL, s.cfg.AllowedOrigins)
	uploadH, tusH, a2aH = guard.Wrap(uploadH), guard.Wrap(tusH), guard.Wrap(a2aH)
	// An MCP Apps upload view (Origin: null) reaches tus by its capability
	// alone (apps_upload.go).
	tusH = s.views.Uploads(guard, s.limiter.Wrap(s.tus), tusH)
	cardH := guard.Wrap(s.a2a.CardHandler())
	// Any method reaches the handlers, which answer a wrong one with a JSON 405.
	r.Any("/mcp", gin.WrapH(mcpH))
	r.Any("/uploads", gin.WrapH(uploadH))
	r.Any(transfer.TusPath+"*id", gin.WrapH(tusH))
	// The upload descriptors of files/authorizeUpload (mcpfiles_http.go):
	// the signed URL is the capability, as for downloads.
	r.Any(transport.TicketUploadPath+":id", gin.WrapH(s.limiter.Wrap(s.pacer.Wrap(http.HandlerFunc(s.fileURIs.ServeUpload)))))
	r.Any("/files/*path", gin.WrapH(s.fileRoutes(guard))) // downloads, DELETE, revoke (files.go)
	r.Any(transfer.A2APath, gin.WrapH(a2aH))
	r.Any(transfer.AgentCardPath, gin.WrapH(cardH))
	for path, h := range s.callers.ProtectedResources(s.a2a.Describe()) { // AGENT_AUTH=oauth
		r.Any(path, gin.WrapH(h)) // GET and OPTIONS (CORS); others get 405
	}
	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	r.GET("/readyz", gin.WrapH(s.ready))
	r.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})))
	r.NoRoute(func(c *gin.Context) {
		if m := c.Request.Method; m != http.MethodGet && m != http.MethodHead && knownPath(c.Request.URL.Path) {
			// gin's Any covers only the common methods: PROPFIND and the
			// like on a real endpoint are a wrong method, not a wrong path.
			c.JSON(http.StatusMethodNotAllowed, transfer.Error{Error: "method " + calls.Truncate(m, 20) + " is not allowed on " + calls.Truncate(c.Request.URL.Path, 60) + "; /files/ takes GET and HEAD, /mcp, /a2a and /uploads take POST"})
			return
		}
		c.JSON(http.StatusNotFound, transfer.Error{Error: "no such endpoint; this agent serves /mcp, /a2a, " + transfer.AgentCardPath + ", /files/, /uploads, /uploads/tus/, /healthz, /readyz, /metrics"})
	})
	return r
}

// knownPath reports whether p is one of the agent's endpoints.
func knownPath(p string) bool {
	switch p {
	case "/mcp", "/uploads", transfer.A2APath, transfer.AgentCardPath, "/healthz", "/readyz", "/metrics":
		return true
	}
	return strings.HasPrefix(p, "/files/")
}

// requestLog logs each request with an id, and echoes the id to the caller.
func (s *Service) requestLog() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := httpguard.RequestID(c.Request)
		c.Header("X-Request-Id", id)
		// The MCP handler sees request headers (req.Extra.Header), not this
		// request's context: carry the id there for the call's logger.
		c.Request.Header.Set("X-Request-Id", id)
		// Behind a trusted balancer the client is the one it names; the
		// handlers see that address.
		client := s.proxies.ClientAddr(c.Request)
		if _, port, err := net.SplitHostPort(c.Request.RemoteAddr); err == nil {
			c.Request.RemoteAddr = net.JoinHostPort(client, port)
		}
		start := time.Now()
		c.Next()
		level := slog.LevelDebug
		if c.Writer.Status() >= 500 {
			level = slog.LevelWarn
		}
		if !s.log.Enabled(c.Request.Context(), level) {
			return
		}
		s.log.Log(c.Request.Context(), level, "http", "request_id", id, "client", client, "method", c.Request.Method,
			"path", c.Request.URL.Path, "status", c.Writer.Status(), "bytes", c.Writer.Size(),
			"duration", time.Since(start))
	}
}
