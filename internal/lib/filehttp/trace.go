package filehttp

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/agentura/agentura/transfer"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the tracer of the file routes' spans: a server span per
// download, upload and tus request (docs/observability.md).
const tracerName = "github.com/agentura/agentura/fileserve"

// The routes of the spans, as the HTTP semantic conventions name a server
// span: "{method} {route}".
const (
	routeDownload  = "/files/{id}"
	routeUploads   = transfer.UploadsPath
	routeTus       = transfer.TusPath
	routeTusUpload = transfer.TusPath + "{id}"
	routeRevoke    = transfer.RevokePath
)

// The attributes of the file routes' spans: the HTTP conventions' method,
// route and status, the file's owner-scoped id and sizes. Never a token, a
// URL's query, a signed URL or a file's name.
var (
	attrHTTPMethod = attribute.Key("http.request.method")
	attrHTTPRoute  = attribute.Key("http.route")
	attrHTTPStatus = attribute.Key("http.response.status_code")
	attrFileID     = attribute.Key("agentura.file.id")
	attrFileSize   = attribute.Key("agentura.file.size")
	attrBytesSent  = attribute.Key("agentura.file.bytes_sent")
	attrUploadID   = attribute.Key("agentura.upload.id")
	attrBytesIn    = attribute.Key("agentura.upload.bytes_received")
	attrOffset     = attribute.Key("agentura.upload.offset")
)

// spanRoute is a route and its spans' names by method, made once: no
// string is built per request.
type spanRoute struct {
	route string
	names map[string]string // "GET" → "GET /files/{id}"; "_OTHER" too
}

func newSpanRoute(route string) spanRoute {
	r := spanRoute{route: route, names: map[string]string{}}
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace, methodOther} {
		r.names[m] = m + " " + route
	}
	return r
}

// methodOther is the method of a span for a method HTTP does not define
// (the conventions' word: a span name must not grow with what a caller
// sends).
const methodOther = "_OTHER"

// The file routes' spans.
var (
	spansDownload  = newSpanRoute(routeDownload)
	spansUploads   = newSpanRoute(routeUploads)
	spansTus       = newSpanRoute(routeTus)
	spansTusUpload = newSpanRoute(routeTusUpload)
	spansRevoke    = newSpanRoute(routeRevoke)
)

// serverSpan is the start option of every span startHTTP starts.
var serverSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// startHTTP starts the server span of r on route, continuing the trace of
// its traceparent header (mcptrace.Propagator) where it has one; the
// request returned carries the span when there is one to carry (with
// tracing off and no traceparent, r itself: no copy on the hot path).
func startHTTP(r *http.Request, route spanRoute) (*http.Request, trace.Span) {
	ctx := r.Context()
	if r.Header.Get("Traceparent") != "" {
		ctx = mcptrace.Propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	method := r.Method
	name, ok := route.names[method]
	if !ok {
		method, name = methodOther, route.names[methodOther]
	}
	ctx, span := tracer().Start(ctx, name, serverSpan...)
	if !span.SpanContext().IsValid() {
		return r, span
	}
	if span.IsRecording() {
		span.SetAttributes(attrHTTPMethod.String(method), attrHTTPRoute.String(route.route))
	}
	return r.WithContext(ctx), span
}

// tracerOf is the tracer of the file routes and the provider it is of.
type tracerOf struct {
	provider trace.TracerProvider
	tracer   trace.Tracer
}

// cachedTracer is the last tracer tracer made.
var cachedTracer atomic.Pointer[tracerOf]

// tracer is the global provider's tracer of the file routes, looked up
// again only when the provider changed (downloads are the hot path: the
// lookup takes a lock).
func tracer() trace.Tracer {
	tp := otel.GetTracerProvider()
	if c := cachedTracer.Load(); c != nil && c.provider == tp {
		return c.tracer
	}
	t := tp.Tracer(tracerName)
	cachedTracer.Store(&tracerOf{provider: tp, tracer: t})
	return t
}

// endHTTP ends span with the answer's status: a 5xx is an error, as the
// HTTP conventions have it for a server (a 4xx is the client's).
func endHTTP(span trace.Span, status int) {
	if span.IsRecording() {
		span.SetAttributes(attrHTTPStatus.Int(status))
		if status >= 500 {
			span.SetAttributes(mcptrace.AttrErrorType.String(strconv.Itoa(status)))
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
	span.End()
}

// serveTraced serves r with serve under a server span of route (startHTTP),
// ended with the answer's status (endHTTP).
func serveTraced(w http.ResponseWriter, r *http.Request, route spanRoute, serve http.HandlerFunc) {
	r, span := startHTTP(r, route)
	cw := &countingWriter{ResponseWriter: w}
	serve(cw, r)
	endHTTP(span, cw.status())
}

// Route is a route of server spans outside this package, made once (NewRoute)
// and used by each request (Serve): the file routes of other packages get
// the spans of this package's (docs/observability.md).
type Route struct{ r spanRoute }

// NewRoute is the route of spans named "{method} {route}"; route is the
// route's template ("/uploads/mcp/{id}"), never a request's path.
func NewRoute(route string) Route { return Route{newSpanRoute(route)} }

// Serve serves r with h under a server span of the route: the HTTP
// conventions' method, route and status, continuing the trace of the
// request's traceparent header, in error for a 5xx answer only. h names
// the file its request is about with SetFileID, by id, never by name.
func (rt Route) Serve(w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	serveTraced(w, r, rt.r, h)
}

// SetFileID records id, the owner-scoped id of the file r is about, as
// agentura.file.id on r's span (Route.Serve and this package's routes), if it records one.
func SetFileID(r *http.Request, id string) {
	if span := recording(r); span != nil {
		span.SetAttributes(attrFileID.String(id))
	}
}

// recording is the span of r's context when it records, else nil.
func recording(r *http.Request) trace.Span {
	if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
		return span
	}
	return nil
}

// startFinish starts the span of handing a complete tus upload (id, size
// bytes) to the store as a staged file, under its PATCH's span.
func startFinish(ctx context.Context, id string, size int64) (context.Context, trace.Span) {
	return tracer().Start(ctx, "tus finish", trace.WithAttributes(attrUploadID.String(id), attrFileSize.Int64(size)))
}

// endFinish ends span with the staged file's id, or why the store did not
// take the upload (scrubbed: the words of a quota or the store).
func endFinish(span trace.Span, staged *fileserve.Meta, err error) {
	if span.IsRecording() {
		if staged != nil {
			span.SetAttributes(attrFileID.String(staged.ID))
		}
		if err != nil {
			span.SetStatus(codes.Error, mcptrace.Scrub(err.Error()))
		}
	}
	span.End()
}
