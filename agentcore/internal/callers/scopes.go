package callers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/httpguard"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The scopes of AGENT_AUTH=oauth: what a caller's access token lets it do
// (docs/security.md). A token of this agent with none of them may still
// connect, list tools and ping.
const (
	// ScopeToolsCall lets a caller run tools: MCP tools/call and tasks,
	// A2A message/send, message/stream and tasks/cancel.
	ScopeToolsCall = "tools:call"
	// ScopeFilesRead lets a caller read what it produced: MCP resources/*,
	// A2A tasks/get and tasks/resubscribe.
	ScopeFilesRead = "files:read"
	// ScopeFilesWrite lets a caller stage inputs (POST /uploads and tus)
	// and delete its files (DELETE /files/...).
	ScopeFilesWrite = "files:write"
)

// oauthScopes are the scopes the protected-resource metadata lists.
var oauthScopes = []string{ScopeToolsCall, ScopeFilesRead, ScopeFilesWrite}

// protectedResourcePath is where an agent with AGENT_AUTH=oauth serves its
// OAuth protected-resource metadata (RFC 9728): the agent's own document
// here, /mcp's at this path followed by /mcp, as the MCP specification
// has clients look for it.
const protectedResourcePath = "/.well-known/oauth-protected-resource"

// The card's security schemes: a2aBearerScheme under AGENT_AUTH=jwt,
// a2aOAuthScheme and a2aOIDCScheme under AGENT_AUTH=oauth.
const (
	a2aBearerScheme a2a.SecuritySchemeName = "bearer"
	a2aOAuthScheme  a2a.SecuritySchemeName = "oauth2"
	a2aOIDCScheme   a2a.SecuritySchemeName = "oidc"
)

// scopeDescriptions say what each scope allows, for the agent card.
var scopeDescriptions = map[string]string{
	ScopeToolsCall:  "run the agent's tools (MCP tools/call, A2A message/send)",
	ScopeFilesRead:  "read the files the caller's calls produced (MCP resources, A2A tasks/get)",
	ScopeFilesWrite: "stage input files (POST /uploads, tus) and delete the caller's files (DELETE /files/...)",
}

// ProtectedResources serves the protected-resource metadata under
// AGENT_AUTH=oauth, by path: the agent's (resource AGENT_PUBLIC_URL) and
// /mcp's (resource AGENT_PUBLIC_URL/mcp), named name; nil otherwise.
func (g *Guard) ProtectedResources(name string) map[string]http.Handler {
	if g.oauth == nil {
		return nil
	}
	doc := func(resource string) http.Handler {
		return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:               resource,
			AuthorizationServers:   []string{g.oauth.Issuer()},
			ScopesSupported:        oauthScopes,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           name,
		})
	}
	return map[string]http.Handler{
		protectedResourcePath:          doc(g.oauth.Origin()),
		protectedResourcePath + "/mcp": doc(g.oauth.MCPResource()),
	}
}

// bearerChallenge is the WWW-Authenticate value of a request to r's
// endpoint refused with code ("" when no token came, "invalid_token",
// "insufficient_scope"): under AGENT_AUTH=oauth it names the
// protected-resource metadata and the scopes wanted (RFC 6750 §3, RFC 9728
// §5.1); scopes nil means the endpoint's usual ones.
func (g *Guard) bearerChallenge(r *http.Request, code, desc string, scopes []string) string {
	if g.oauth == nil {
		if code == "" {
			return "Bearer" // RFC 6750 §3.1: no error code without credentials
		}
		return `Bearer error="` + code + `"`
	}
	// The endpoint's usual scopes: what a host needs for its usual work there.
	meta, usual := g.publicURL+protectedResourcePath, []string{ScopeFilesWrite} // /uploads, tus
	switch r.URL.Path {
	case "/mcp":
		meta, usual = meta+"/mcp", oauthScopes
	case transfer.A2APath:
		usual = []string{ScopeToolsCall, ScopeFilesRead}
	}
	if scopes == nil {
		scopes = usual
	}
	params := []string{`resource_metadata="` + meta + `"`, `scope="` + strings.Join(scopes, " ") + `"`}
	if code != "" {
		params = append(params, `error="`+code+`"`)
	}
	if desc != "" {
		params = append(params, `error_description="`+quotable(desc)+`"`)
	}
	return "Bearer " + strings.Join(params, ", ")
}

// quotable makes s fit a quoted-string of RFC 6750 (%x20-21 / %x23-5B / %x5D-7E).
func quotable(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '"':
			b.WriteByte('\'')
		case c == '\\' || c < 0x20 || c > 0x7e:
			b.WriteByte(' ')
		default:
			b.WriteRune(c)
		}
	}
	return calls.Truncate(b.String(), 300)
}

// challengeWriter adds the endpoint's challenge to any 401 or 403 answered
// behind requireCaller without one (the go-sdk's own, the origin guard's),
// so that every refusal points a client at the metadata.
type challengeWriter struct {
	http.ResponseWriter
	g *Guard
	r *http.Request
}

// WriteHeader adds the challenge to a 401 or 403.
func (c *challengeWriter) WriteHeader(code int) {
	if (code == http.StatusUnauthorized || code == http.StatusForbidden) && c.Header().Get("WWW-Authenticate") == "" {
		c.Header().Set("WWW-Authenticate", c.g.bearerChallenge(c.r, "", "", nil))
	}
	c.ResponseWriter.WriteHeader(code)
}

// Flush sends what was written so far (streamed answers).
func (c *challengeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// RequireScope refuses, under AGENT_AUTH=oauth, a request whose token lacks
// scope with 403 insufficient_scope; otherwise it is next itself.
func (g *Guard) RequireScope(scope string, next http.Handler) http.Handler {
	if g.oauth == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.serveScoped(w, r, []string{scope}, next)
	})
}

// serveScoped serves r with next when its token holds every scope of
// scopes (or AGENT_AUTH is not oauth), else refuses it with 403
// insufficient_scope naming all that are missing (so a host steps up once).
func (g *Guard) serveScoped(w http.ResponseWriter, r *http.Request, scopes []string, next http.Handler) {
	ti := auth.TokenInfoFromContext(r.Context())
	if g.oauth == nil || ti == nil {
		next.ServeHTTP(w, r) // no scopes, or requireCaller answered already
		return
	}
	var missing []string
	for _, sc := range scopes {
		if sc != "" && !slices.Contains(ti.Scopes, sc) && !slices.Contains(missing, sc) {
			missing = append(missing, sc)
		}
	}
	if len(missing) == 0 {
		next.ServeHTTP(w, r)
		return
	}
	desc := fmt.Sprintf("this request needs the scope %s, which the token lacks", strings.Join(missing, " and "))
	w.Header().Set("WWW-Authenticate", g.bearerChallenge(r, "insufficient_scope", desc, missing))
	httpjson.WriteError(w, http.StatusForbidden, desc+fmt.Sprintf(" (it has %q); sign in again asking for it", ti.Scopes))
}

// MCPScope is the scope an MCP method needs; "" for none beyond a token of
// this agent (initialize, tools/list, ping, notifications...).
func MCPScope(method string) string {
	switch {
	case method == "tools/call", strings.HasPrefix(method, "tasks/"):
		return ScopeToolsCall
	case strings.HasPrefix(method, "resources/"), method == "files/authorizeDownload":
		return ScopeFilesRead
	case method == "files/authorizeUpload":
		return ScopeFilesWrite
	}
	return ""
}

// A2AScope is the scope an A2A method needs; "" for none (the card).
func A2AScope(method string) string {
	switch {
	case method == "message/send", method == "message/stream", method == "tasks/cancel",
		strings.HasPrefix(method, "tasks/pushNotificationConfig/"):
		return ScopeToolsCall
	case strings.HasPrefix(method, "tasks/"):
		return ScopeFilesRead
	}
	return ""
}

// JSONRPC reads each JSON-RPC body of /mcp and /a2a once, strictly
// (httpguard.JSONRPCMethods), before anything dispatches on it: a body
// that parsers could read differently (a member named twice in any case,
// bytes that are not UTF-8, a second value) is refused with 400, so the
// scope check here, the guards after it and the SDK all see one method
// and one of each member. Under AGENT_AUTH=oauth the request then needs
// the scopes of every method it names: the body's messages and the
// Mcp-Method header, which the go-sdk compares with the body only on
// 2026-07-28 requests. Bodies come here bounded: the inline pass has
// taken their files out (inline.go), and a body over limit is refused.
func (g *Guard) JSONRPC(limit int64, scope func(string) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var scopes []string
		if m := r.Header.Get(transfer.HeaderMCPMethod); m != "" {
			scopes = append(scopes, scope(m))
		}
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody || r.ContentLength > limit {
			g.serveScoped(w, r, scopes, next) // no body to read, or one the handler refuses whole (413)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			httpjson.WriteError(w, http.StatusBadRequest, "could not read the request body: "+err.Error())
			return
		}
		if int64(len(body)) > limit {
			httpjson.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request exceeds the limit of %d bytes (AGENT_MAX_UPLOAD_BYTES as base64 plus 1 MiB); upload large files to /uploads and send their URL", limit))
			return
		}
		methods, err := httpguard.JSONRPCMethods(body)
		if err != nil {
			code, msg := -32700, "parse error: the body is not JSON: "+err.Error()
			if errors.Is(err, httpguard.ErrAmbiguous) {
				code, msg = -32600, "invalid request: "+err.Error()
			}
			httpguard.WriteRPCError(w, http.StatusBadRequest, nil, code, calls.Truncate(msg, 400))
			return
		}
		for _, m := range methods {
			scopes = append(scopes, scope(m))
		}
		r.Body = httpguard.ReadCloser{Reader: bytes.NewReader(body), Closer: r.Body}
		r.ContentLength = int64(len(body))
		g.serveScoped(w, r, scopes, next)
	})
}

// CardSecurity declares on the card how a peer gets a token: under
// AGENT_AUTH=oauth the issuer's OAuth 2.0 flows (authorization code for a
// user, client credentials for an agent) and, when it is an OpenID Connect
// provider, its discovery URL; under AGENT_AUTH=jwt a bearer JWT.
func (g *Guard) CardSecurity(card *a2a.AgentCard) {
	if g.verifier == nil {
		return
	}
	bearer := func(desc string) {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{a2aBearerScheme: a2a.HTTPAuthSecurityScheme{Scheme: "bearer", BearerFormat: "JWT", Description: desc}}
		card.Security = []a2a.SecurityRequirements{{a2aBearerScheme: a2a.SecuritySchemeScopes{}}}
	}
	if g.oauth == nil {
		bearer("Authorization: Bearer <JWT>; its sub claim names the caller, who owns the files of the call.")
		return
	}
	need := a2a.SecuritySchemeScopes{ScopeToolsCall, ScopeFilesRead}
	desc := fmt.Sprintf("OAuth 2.1 access token of %s whose audience is %s (send resource=%s, RFC 8707; the protected-resource metadata is %s); its sub names the caller, who owns the files of the call.",
		g.oauth.Issuer(), g.oauth.Origin(), g.oauth.Origin(), g.publicURL+protectedResourcePath)
	meta, err := g.oauth.IssuerMeta(context.Background())
	if err != nil {
		bearer(desc) // the issuer cannot be read now: still say what kind of token it is
		return
	}
	flows := a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: meta.TokenEndpoint, Scopes: scopeDescriptions}}
	if meta.AuthorizationEndpoint != "" {
		flows.AuthorizationCode = &a2a.AuthorizationCodeOAuthFlow{AuthorizationURL: meta.AuthorizationEndpoint, TokenURL: meta.TokenEndpoint, Scopes: scopeDescriptions}
	}
	scheme := a2a.OAuth2SecurityScheme{Description: desc, Flows: flows}
	if !meta.OIDC {
		scheme.Oauth2MetadataURL = meta.URL
	}
	card.SecuritySchemes = a2a.NamedSecuritySchemes{a2aOAuthScheme: scheme}
	card.Security = []a2a.SecurityRequirements{{a2aOAuthScheme: need}}
	if meta.OIDC {
		card.SecuritySchemes[a2aOIDCScheme] = a2a.OpenIDConnectSecurityScheme{Description: desc, OpenIDConnectURL: meta.URL}
		card.Security = append(card.Security, a2a.SecurityRequirements{a2aOIDCScheme: need})
	}
}

// Permits reports whether a tool call whose token is ti may use a tool
// that needs scope beyond tools:call: always but under AGENT_AUTH=oauth.
func (g *Guard) Permits(ti *auth.TokenInfo, scope string) bool {
	return scope == "" || g.oauth == nil || ti != nil && slices.Contains(ti.Scopes, scope)
}
