// Package mcptrace carries one trace across MCP processes on the standard
// carrier and names its spans by the OpenTelemetry semantic conventions
// for MCP. The W3C trace context (traceparent, tracestate) and baggage
// travel in a request's params._meta (SEP-414, MCP 2026-07-28); a server
// continues the trace from there, else from the HTTP traceparent header,
// and a client writes it there.
//
// A span records the method, the tool or prompt name, the session, the
// protocol revision, the JSON-RPC id and the outcome: never arguments,
// file bytes, file names, tokens or URLs (an error's words have their
// quoted parts and their URLs' queries cut: Scrub). Each request is also a
// point of the conventions' operation-duration histogram (metrics.go).
// File names go into the spans of this module only when the process allows
// it (SetFileNames, AGENT_TRACE_FILE_NAMES).
package mcptrace

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Instrumentation is the name of the tracer of this module's spans.
const Instrumentation = "github.com/agentura/agentura"

// The attributes of the MCP semantic conventions this package sets.
const (
	AttrMethod          = attribute.Key("mcp.method.name")
	AttrSession         = attribute.Key("mcp.session.id")
	AttrProtocol        = attribute.Key("mcp.protocol.version")
	AttrStatusCode      = attribute.Key("rpc.response.status_code")
	AttrErrorType       = attribute.Key("error.type")
	AttrToolName        = attribute.Key("gen_ai.tool.name")
	AttrPromptName      = attribute.Key("gen_ai.prompt.name")
	AttrOperationName   = attribute.Key("gen_ai.operation.name")
	AttrRequestID       = attribute.Key("jsonrpc.request.id")
	operationToolCall   = "execute_tool"
	errorTypeToolResult = "tool_error"
)

// Propagator reads and writes the W3C trace context and baggage, whatever
// the process's global propagator is: the carrier of SEP-414 is W3C's.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// MetaCarrier is a request's params._meta as a propagation carrier: its
// string members are the fields (traceparent, tracestate, baggage).
type MetaCarrier map[string]any

// Get returns the string member key, or "".
func (m MetaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

// Set sets the member key.
func (m MetaCarrier) Set(key, value string) { m[key] = value }

// Keys lists the members.
func (m MetaCarrier) Keys() []string {
	return slices.Collect(maps.Keys(m))
}

// extract returns ctx continuing the trace req carries: in params._meta,
// else in the HTTP request's traceparent header; ctx itself when neither
// holds one.
func extract(ctx context.Context, req mcp.Request) context.Context {
	if p := req.GetParams(); !isNil(p) {
		if _, ok := p.GetMeta()["traceparent"].(string); ok {
			return Propagator.Extract(ctx, MetaCarrier(p.GetMeta()))
		}
	}
	if extra := req.GetExtra(); extra != nil && extra.Header != nil && extra.Header.Get("traceparent") != "" {
		return Propagator.Extract(ctx, propagation.HeaderCarrier(extra.Header))
	}
	return ctx
}

// inject writes the trace context of ctx into params._meta.
func inject(ctx context.Context, p mcp.Params) {
	if isNil(p) || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	meta := p.GetMeta()
	if meta == nil {
		meta = map[string]any{}
	}
	Propagator.Inject(ctx, MetaCarrier(meta))
	p.SetMeta(meta)
}

// isNil reports whether p is nil or a nil pointer: the go-sdk hands a
// request without params as a nil pointer of its type.
func isNil(p mcp.Params) bool {
	if p == nil {
		return true
	}
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Server is the receiving middleware of an MCP server: each request gets
// a server span, child of the trace the request carries (extract), named
// "{method} {target}" (tools/call ocr_document), which the handler's work
// is under, and a point of the mcp.server.operation.duration histogram.
// The tracer and meter are the global providers', looked up per request,
// so providers set after the server was built are used. The span has the
// request's JSON-RPC id when the HTTP handler is wrapped by RequestIDs.
func Server(next mcp.MethodHandler) mcp.MethodHandler {
	return observed(next, func(in *instruments) metric.Float64Histogram { return in.server },
		func(ctx context.Context, name string, req mcp.Request, attrs []attribute.KeyValue) (context.Context, trace.Span, []attribute.KeyValue) {
			if v, ok := req.(interface{ ProtocolVersion() string }); ok {
				if pv := v.ProtocolVersion(); pv != "" {
					attrs = append(attrs, AttrProtocol.String(pv))
				}
			}
			ctx, span := otel.Tracer(Instrumentation).Start(extract(ctx, req), name,
				trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(spanOnly(req, attrs)...))
			if span.IsRecording() {
				if id := requestIDOf(req); id != "" {
					span.SetAttributes(AttrRequestID.String(id))
				}
			}
			return ctx, span, attrs
		})
}

// Client is the sending middleware of an MCP client: each request gets a
// client span, child of the caller's context, and carries it in its
// params._meta, so the server's span is its child; and a point of the
// mcp.client.operation.duration histogram. The span has the request's
// JSON-RPC id when the transport reports it (RecordRequestID).
func Client(next mcp.MethodHandler) mcp.MethodHandler {
	return observed(next, func(in *instruments) metric.Float64Histogram { return in.client },
		func(ctx context.Context, name string, req mcp.Request, attrs []attribute.KeyValue) (context.Context, trace.Span, []attribute.KeyValue) {
			ctx, span := otel.Tracer(Instrumentation).Start(ctx, name,
				trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(spanOnly(req, attrs)...))
			if span.IsRecording() {
				ctx = context.WithValue(ctx, clientSpanKey{}, span)
			}
			inject(ctx, req.GetParams()) // when the span is valid
			return ctx, span, attrs
		})
}

// observed is the middleware of Server and Client: a request (not a
// notification) runs under the span start starts, which ends with the
// request's outcome; when the histogram hist picks is enabled, the
// request's duration is a point of it, with the attributes start returns.
func observed(next mcp.MethodHandler, hist func(*instruments) metric.Float64Histogram,
	start func(ctx context.Context, name string, req mcp.Request, attrs []attribute.KeyValue) (context.Context, trace.Span, []attribute.KeyValue)) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		h, began := hist(instrumentsNow()), time.Now()
		measured := h.Enabled(ctx)
		name, attrs := describe(method, req)
		ctx, span, attrs := start(ctx, name, req, attrs)
		defer span.End()
		res, err := next(ctx, method, req)
		o := outcomeOf(res, err)
		end(span, o)
		if measured {
			h.Record(ctx, time.Since(began).Seconds(), metric.WithAttributes(o.attrs(attrs)...))
		}
		return res, err
	}
}

// describe names the span of a request and lists the attributes its span
// and its duration share.
func describe(method string, req mcp.Request) (string, []attribute.KeyValue) {
	name := method
	attrs := []attribute.KeyValue{AttrMethod.String(method)}
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParams:
		if p != nil && p.Name != "" {
			name += " " + p.Name
			attrs = append(attrs, AttrToolName.String(p.Name), AttrOperationName.String(operationToolCall))
		}
	case *mcp.CallToolParamsRaw:
		if p != nil && p.Name != "" {
			name += " " + p.Name
			attrs = append(attrs, AttrToolName.String(p.Name), AttrOperationName.String(operationToolCall))
		}
	case *mcp.GetPromptParams:
		if p != nil && p.Name != "" {
			name += " " + p.Name
			attrs = append(attrs, AttrPromptName.String(p.Name))
		}
	}
	return name, attrs
}

// spanOnly adds to attrs what a span records but a duration does not (one
// value per session would make a series per session): the session.
func spanOnly(req mcp.Request, attrs []attribute.KeyValue) []attribute.KeyValue {
	if s := req.GetSession(); s != nil {
		if id := s.ID(); id != "" {
			return append(attrs[:len(attrs):len(attrs)], AttrSession.String(id))
		}
	}
	return attrs
}

// outcome is how a request ended, as the conventions record it.
type outcome struct {
	failed     bool
	errorType  string // error.type: the JSON-RPC code, "tool_error" or "internal"
	statusCode string // rpc.response.status_code: a JSON-RPC error's code
	words      func() string
}

// outcomeOf reads a JSON-RPC error's code and words, or a tool result
// that is an error with its words.
func outcomeOf(res mcp.Result, err error) outcome {
	if err != nil {
		o := outcome{failed: true, errorType: "internal", words: err.Error}
		if werr, ok := errors.AsType[*jsonrpc.Error](err); ok {
			o.statusCode = strconv.FormatInt(werr.Code, 10)
			o.errorType = o.statusCode
		}
		return o
	}
	if ctr, ok := res.(*mcp.CallToolResult); ok && ctr != nil && ctr.IsError {
		return outcome{failed: true, errorType: errorTypeToolResult, words: func() string { return toolErrorText(ctr) }}
	}
	return outcome{}
}

// attrs is attrs with the outcome's.
func (o outcome) attrs(attrs []attribute.KeyValue) []attribute.KeyValue {
	if o.statusCode != "" {
		attrs = append(attrs, AttrStatusCode.String(o.statusCode))
	}
	if o.failed {
		attrs = append(attrs, AttrErrorType.String(o.errorType))
	}
	return attrs
}

// end records the outcome on span, its words scrubbed.
func end(span trace.Span, o outcome) {
	if !span.IsRecording() || !o.failed {
		return
	}
	span.SetAttributes(o.attrs(nil)...)
	span.SetStatus(codes.Error, Scrub(o.words()))
}

// toolErrorText is the words of a tool's error result, as its caller reads
// them.
func toolErrorText(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok && t.Text != "" {
			return t.Text
		}
	}
	return "the tool reported an error"
}

// maxStatus caps a span's status description.
const maxStatus = 512

// Scrub makes words fit for a span: every double-quoted part cut (where
// the errors of this module quote file names and what a caller sent),
// every URL cut of its query and fragment (where signed URLs carry their
// token) and of its user information (transfer.Redact), a token= value
// cut, and the whole capped. Unless file names are allowed in spans
// (FileNames), a URL's path and an absolute path, which name files, are
// cut too.
func Scrub(s string) string {
	s = unquote(s)
	names := FileNames()
	if strings.Contains(s, "://") || strings.Contains(s, "token=") || (!names && strings.Contains(s, "/")) {
		fields := strings.FieldsFunc(s, func(r rune) bool {
			return r == ' ' || r == '\n' || r == '\t' || r == '"' || r == '\'' || r == '<' || r == '>' || r == '(' || r == ')' || r == ','
		})
		for _, f := range fields {
			f = strings.TrimRight(f, ":;.") // the sentence's, not the URL's or path's
			var clean string
			switch {
			case strings.Contains(f, "://"):
				clean = transfer.Redact(f)
				if !names {
					clean = cutURLPath(clean)
				}
			case strings.Contains(f, "token="):
				clean = f[:strings.Index(f, "token=")] + "token=…"
			case !names && len(f) > 1 && f[0] == '/':
				clean = "/…"
			default:
				continue
			}
			if clean != f {
				s = strings.ReplaceAll(s, f, clean)
			}
		}
	}
	return Truncate(s, maxStatus)
}

// cutURLPath cuts what follows a URL's host: "https://agent/…".
func cutURLPath(u string) string {
	i := strings.Index(u, "://")
	j := strings.IndexAny(u[i+3:], "/?#")
	if j < 0 {
		return u
	}
	return u[:i+3+j] + "/…"
}

// Truncate cuts s to at most max bytes, on a character's start, marking the
// cut with "…": for words that quote what a caller sent.
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max] + "…"
}

// unquote replaces each double-quoted part of s ("report.pdf") by "…"; an
// unpaired quote cuts the rest.
func unquote(s string) string {
	if !strings.Contains(s, `"`) {
		return s
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(s, '"')
		if open < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:open])
		b.WriteString(`"…"`)
		end := strings.IndexByte(s[open+1:], '"')
		if end < 0 {
			return b.String()
		}
		s = s[open+1+end+1:]
	}
}
