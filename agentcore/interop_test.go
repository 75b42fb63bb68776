package agentcore

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/tracing"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// An mcp-go v1.6.0 client that does not pin a protocol version first tries
// 2026-07-28 through server/discover. Both server modes must leave it with a
// working session.
func TestUnpinnedMCPGoClient(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		name := map[bool]string{false: "stateful", true: "stateless"}[stateless]
		t.Run(name, func(t *testing.T) {
			svc, srv := serveTestService(t, func(c *Config) { c.MCPStateless = stateless })
			addEchoTool(svc)
			tr, err := transport.NewStreamableHTTP(srv.URL + "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			c := client.NewClient(tr)
			ctx := context.Background()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var init mcpgo.InitializeRequest
			init.Params.ClientInfo = mcpgo.Implementation{Name: "unpinned", Version: "1"}
			res, err := c.Initialize(ctx, init)
			if err != nil {
				t.Fatal(err)
			}
			var call mcpgo.CallToolRequest
			call.Params.Name = "echo"
			call.Params.Arguments = map[string]any{"source": "data:text/plain;name=a.txt,hello"}
			out, err := c.CallTool(ctx, call)
			if err != nil {
				t.Fatalf("negotiated %s, then: %v", res.ProtocolVersion, err)
			}
			if out.IsError {
				t.Fatalf("negotiated %s, then the call failed: %+v", res.ProtocolVersion, out.Content)
			}
		})
	}
}

// w3cMeta is a tracing.MetaPropagator: what mcp-go v1.6.0 calls, through
// client.WithMetaPropagator, on every tools/call's params._meta (SEP-414)
// before it sends it. mcp-go's OpenTelemetry adapter module
// (github.com/mark3labs/mcp-go/otel) is not published on the module proxy,
// so this is that adapter's shape: OpenTelemetry's W3C TraceContext
// writing into mcp.Meta's AdditionalFields, which mcp-go marshals as the
// members of _meta.
type w3cMeta struct{}

// InjectMeta writes the trace context of ctx into meta, allocating one when
// there is something to write; nil stays nil otherwise, as the interface asks.
func (w3cMeta) InjectMeta(ctx context.Context, meta *mcpgo.Meta) *mcpgo.Meta {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return meta
	}
	if meta == nil {
		meta = &mcpgo.Meta{}
	}
	if meta.AdditionalFields == nil {
		meta.AdditionalFields = map[string]any{}
	}
	propagation.TraceContext{}.Inject(ctx, mcptrace.MetaCarrier(meta.AdditionalFields))
	return meta
}

// ExtractMeta continues the trace meta carries; a client never needs it.
func (w3cMeta) ExtractMeta(ctx context.Context, meta *mcpgo.Meta) context.Context {
	if meta == nil {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, mcptrace.MetaCarrier(meta.AdditionalFields))
}

var _ tracing.MetaPropagator = w3cMeta{}

// Issue 38's interop check: a trace started on an mcp-go v1.6.0 client,
// carried by mcp-go's own SEP-414 hook (client.WithMetaPropagator) in
// params._meta, continues in the agent, which exports over OTLP/HTTP a
// tools/call server span in the client's trace whose parent is the client's
// span. The second call hands the agent the first's signed download URL:
// no exported span holds its token. Pinned to 2025-11-25 the trace is the
// only _meta member; unpinned mcp-go negotiates 2026-07-28 and merges its
// own members (protocol version, client info) with it.
func TestMCPGoPropagatorTraceContinuesInAgent(t *testing.T) {
	for _, pinned := range []bool{true, false} {
		name := map[bool]string{true: "pinned 2025-11-25", false: "unpinned"}[pinned]
		t.Run(name, func(t *testing.T) {
			flush := startTracing(t)
			svc, srv := serveTestService(t, nil)
			addEchoTool(svc)

			// The client is another process's tracer: its spans stay in
			// its own provider, never in the agent's exporter.
			clientTP := sdktrace.NewTracerProvider()
			t.Cleanup(func() { clientTP.Shutdown(context.Background()) })
			tracer := clientTP.Tracer("mcp-go host")

			tr, err := transport.NewStreamableHTTP(srv.URL+"/mcp", transport.WithHTTPTimeout(mcptest.CallTimeout))
			if err != nil {
				t.Fatal(err)
			}
			opts := []client.ClientOption{client.WithMetaPropagator(w3cMeta{})}
			if pinned {
				c := client.NewClient(tr, append(opts, client.WithProtocolVersion(mcptest.Protocol))...)
				mcptest.Initialize(t, c)
				runTracedCalls(t, c, tracer, flush)
				return
			}
			c := client.NewClient(tr, opts...)
			ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
			defer cancel()
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			var init mcpgo.InitializeRequest
			init.Params.ClientInfo = mcpgo.Implementation{Name: "unpinned", Version: "1"}
			res, err := c.Initialize(ctx, init)
			if err != nil {
				t.Fatal(err)
			}
			if res.ProtocolVersion != mcptest.Revision {
				t.Fatalf("unpinned mcp-go negotiated %s, want %s (its _meta merge path)", res.ProtocolVersion, mcptest.Revision)
			}
			runTracedCalls(t, c, tracer, flush)
		})
	}
}

// runTracedCalls makes two echo calls through c, each inside its own
// client span of tracer: the first of bytes in a data: URL, the second of
// the first's download URL. flush ends the agent's tracing and returns what
// it exported; each call must be there as a server span under its client
// span, and no span may hold the download token.
func runTracedCalls(t *testing.T, c *client.Client, tracer trace.Tracer, flush func() []otlptest.Span) {
	t.Helper()
	call := func(source string) (*mcpgo.CallToolResult, trace.SpanContext) {
		ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
		defer cancel()
		ctx, span := tracer.Start(ctx, "host asks for echo", trace.WithSpanKind(trace.SpanKindClient))
		defer span.End()
		var req mcpgo.CallToolRequest
		req.Params.Name = "echo"
		req.Params.Arguments = map[string]any{"source": source}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("tools/call echo: %v", err)
		}
		mcptest.MustSucceed(t, "echo", res)
		return res, span.SpanContext()
	}
	first, firstSpan := call("data:text/plain;name=secret-plan.txt;base64,aGVsbG8=")
	download := mcptest.StructuredFiles(t, first)[0].DownloadURL
	u, err := url.Parse(download)
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("first call's download URL %q (%v), want one with its token", download, err)
	}
	token := u.Query().Get("token")
	_, secondSpan := call(download)
	if firstSpan.TraceID() == secondSpan.TraceID() {
		t.Fatal("the two client spans share a trace; the check needs two roots")
	}

	spans := flush()
	found := map[trace.TraceID]bool{}
	for _, s := range spans {
		for _, parent := range []trace.SpanContext{firstSpan, secondSpan} {
			if s.Name != "tools/call echo" || hexOf(s.TraceId) != parent.TraceID().String() {
				continue
			}
			if found[parent.TraceID()] {
				t.Errorf("two tools/call echo spans in trace %s", parent.TraceID())
			}
			found[parent.TraceID()] = true
			if hexOf(s.ParentSpanId) != parent.SpanID().String() || s.Kind != tracepb.Span_SPAN_KIND_SERVER {
				t.Errorf("agent's span in trace %s: parent %s kind %v; want a server span, child of the client's %s",
					parent.TraceID(), hexOf(s.ParentSpanId), s.Kind, parent.SpanID())
			}
		}
		for _, v := range spanValues(s) {
			if strings.Contains(v, "token=") || strings.Contains(v, token) {
				t.Errorf("span %s records %q: the download token", s.Name, v)
			}
		}
	}
	if !found[firstSpan.TraceID()] || !found[secondSpan.TraceID()] {
		t.Errorf("agent's tools/call echo span in the client's traces: first %v, second %v; %d spans exported",
			found[firstSpan.TraceID()], found[secondSpan.TraceID()], len(spans))
	}
}
