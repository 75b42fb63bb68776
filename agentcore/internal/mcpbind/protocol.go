package mcpbind

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"reflect"

	"github.com/agentura/agentura/agentcore/internal/httpguard"
	"github.com/agentura/agentura/transfer"
	"github.com/agentura/agentura/transfer/mcpfile"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP protocol layer: which revisions the agent serves and how, what it
// declares (capabilities, extensions, cache hints, schema dialect), and what
// it reads from a request's _meta. Each is decided here, once; the tools,
// resources and transports use these.
//
// Every revision the go-sdk knows is served on the one /mcp endpoint: the
// current one, 2026-07-28, statelessly (no initialize, no Mcp-Session-Id,
// _meta on each request), the older ones through initialize and a session
// (or statelessly too, with AGENT_MCP_STATELESS). The go-sdk serves
// 2026-07-28 only on a stateless handler and refuses it on a stateful one
// (-32022), so the agent holds one handler of each kind over the same
// *mcp.Server and routes each request by the revision it names.

const (
	// RevisionSessionless is the first MCP revision without sessions
	// (SEP-2575): each request names its revision in the
	// MCP-Protocol-Version header and in _meta.
	RevisionSessionless = "2026-07-28"
	// methodListen opens a 2026-07-28 request's standing stream of
	// notifications.
	methodListen = "subscriptions/listen"
	// revisionTasks is the revision whose core has tasks (SEP-1686): a
	// tools/call asks for one with a "task" parameter.
	revisionTasks = "2025-11-25"
	// extTasks is the Tasks extension (SEP-2663) of 2026-07-28: a client
	// declares it in each request's capabilities, the server in
	// server/discover, and the server then answers a call of a long tool
	// with a task.
	extTasks = "io.modelcontextprotocol/tasks"
	// SchemaDialect is the dialect the agent's tool schemas declare
	// ($schema): the default of MCP since 2025-11-25 (SEP-1613) and the
	// one 2026-07-28 opens tool schemas to (SEP-2106).
	SchemaDialect = "https://json-schema.org/draft/2020-12/schema"
)

// sessionlessRevision reports whether v, an MCP-Protocol-Version header,
// names a revision served without sessions. Revisions are dates, compared
// as the go-sdk compares them.
func sessionlessRevision(v string) bool {
	return len(v) == len(RevisionSessionless) && v >= RevisionSessionless
}

// servedStateless reports whether the request is served by the stateless
// handler: every request when AGENT_MCP_STATELESS is set, else one that
// names a sessionless revision in its header.
func (s *Server) servedStateless(r *http.Request) bool {
	return s.Stateless || sessionlessRevision(r.Header.Get(transfer.HeaderMCPProtocolVersion))
}

// mcpHandler is the go-sdk's streamable HTTP handling of /mcp: requests of
// a sessionless revision go to a stateless handler, others to a stateful
// one (or to the stateless one with AGENT_MCP_STATELESS); both serve s.mcp.
func (s *Server) mcpHandler(bodyLimit int64) http.Handler {
	server := func(*http.Request) *mcp.Server { return s.mcp }
	stateless := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		Logger:              sdkLogger(s.Log),
		MaxRequestBodyBytes: bodyLimit,
	})
	if s.Stateless {
		return stateless
	}
	stateful := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{
		Logger:              sdkLogger(s.Log),
		MaxRequestBodyBytes: bodyLimit,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.servedStateless(r) || metaNamesRevision(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// metaNamesRevision reports whether r, a POST without a session or a
// revision header, names its revision in _meta: a sessionless request that
// left out the header the revision requires. The stateless handler answers
// it with the error that says so, where the stateful one would refuse the
// revision itself (-32022).
func metaNamesRevision(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get(transfer.HeaderMCPSessionID) != "" || r.Header.Get(transfer.HeaderMCPProtocolVersion) != "" {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, httpguard.MCPPeekBytes))
	r.Body = httpguard.ReadCloser{Reader: io.MultiReader(bytes.NewReader(head), r.Body), Closer: r.Body}
	return err == nil && bytes.Contains(head, []byte(`"`+mcp.MetaKeyProtocolVersion+`"`))
}

// serverOptions are the go-sdk options of the agent's MCP server: every
// revision the go-sdk knows, the capabilities below, the cache hints.
func (s *Server) serverOptions() *mcp.ServerOptions {
	return &mcp.ServerOptions{
		Instructions: s.Instructions,
		Logger:       sdkLogger(s.Log),
		Capabilities: capabilities(s.Tasks != nil),
		SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) { *c = cacheHints(req) },
	}
}

// capabilities are what the agent declares to every client, in initialize
// and server/discover: tools and resources whose lists may change (tools
// added at run time; produced files), and log messages (logging/setLevel on
// older revisions, the logLevel in _meta on 2026-07-28). Extensions the
// agent serves are declared here too, with AddExtension: the Tasks
// extension when the store keeps tasks (tasks), and MCP Apps (apps.go). The tasks capability of
// 2025-11-25 is added to initialize results of that revision alone
// (tasks_wire.go), the go-sdk knowing no such field.
func capabilities(tasks bool) *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true},
		Logging:   &mcp.LoggingCapabilities{},
	}
	if tasks {
		c.AddExtension(extTasks, nil)
	}
	// MCP Apps: the views (apps.go) are ui:// resources of this type.
	c.AddExtension(transfer.AppsExtension, map[string]any{"mimeTypes": []string{transfer.AppMIMEType}})
	return c
}

// cacheHints are the cache-control fields (ttlMs, cacheScope) of a list or
// read result. Nothing is fresh for long (tools may be added, files come
// and go): ttlMs 0. What depends on the caller, its resources, is
// "private"; the rest is "public".
func cacheHints(req mcp.Request) mcp.Cacheable {
	switch req.(type) {
	case *mcp.ListResourcesRequest, *mcp.ReadResourceRequest:
		return mcp.Cacheable{CacheScope: "private"}
	}
	return mcp.Cacheable{CacheScope: "public"}
}

// withDialect is a tool schema as the agent publishes it: declaring its
// dialect at the root, unless it names one of its own.
func withDialect(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil || s.Schema != "" {
		return s
	}
	out := *s
	out.Schema = SchemaDialect
	return &out
}

// requestMeta is what the agent reads from a request's _meta beside what
// the go-sdk reads (the progress token, the 2026-07-28 revision, client
// and log level).
type requestMeta struct {
	// ownerHandle is the anonymous caller's owner handle (owner.go), ""
	// when the request carries none.
	ownerHandle string
	// revision is the 2026-07-28 (or later) revision the request names;
	// "" for a request of an older revision, which names none.
	revision string
	// tasks reports whether the request's client capabilities declare
	// the Tasks extension (2026-07-28 declares capabilities per request).
	tasks bool
	// files reports whether they declare the draft's files capability
	// (SEP-2631 §2).
	files bool
}

// readMeta reads the request's _meta.
func readMeta(req mcp.Request) requestMeta {
	var m requestMeta
	if req == nil {
		return m
	}
	// A request without params holds a nil pointer, whose GetMeta panics.
	p := req.GetParams()
	if v := reflect.ValueOf(p); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return m
	}
	meta := p.GetMeta()
	m.ownerHandle, _ = meta[transfer.MetaOwner].(string)
	if v, _ := meta[mcp.MetaKeyProtocolVersion].(string); sessionlessRevision(v) {
		m.revision = v
	}
	if caps, ok := meta[mcp.MetaKeyClientCapabilities].(map[string]any); ok {
		exts, _ := caps["extensions"].(map[string]any)
		_, m.tasks = exts[extTasks]
		_, m.files = caps[mcpfile.CapabilityFiles].(map[string]any)
	}
	return m
}

// legacyRevision is the revision of a request of an older revision: the
// one its session negotiated in initialize (the client's, when the go-sdk
// serves it, else 2025-11-25), or, served statelessly, the one its
// MCP-Protocol-Version header names.
func legacyRevision(req mcp.Request) string {
	v := ""
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		if ip := ss.InitializeParams(); ip != nil {
			v = ip.ProtocolVersion
		}
	}
	if v == "" && req.GetExtra() != nil {
		v = req.GetExtra().Header.Get(transfer.HeaderMCPProtocolVersion)
	}
	switch v {
	case "2025-06-18", "2025-03-26", "2024-11-05":
		return v
	}
	return revisionTasks
}
