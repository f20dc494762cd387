package api

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"platformapi/resources/tracing"
)

// Attributes of the HTTP server spans besides OpenTelemetry's own.
const (
	attrOperation = attribute.Key("platformapi.operation")
	attrRequestID = attribute.Key("platformapi.request_id")
	attrTokenID   = attribute.Key("platformapi.token_id")
)

// Tracing is the server's tracing; nil: off.
func (s *Server) Tracing() *tracing.Tracing { return s.cfg.Tracing }

// rootChain is the middleware every request passes, in order; the tracing
// middleware only when tracing is on (off, the chain is exactly the
// untraced one).
func (s *Server) rootChain() []func(http.Handler) http.Handler {
	chain := []func(http.Handler) http.Handler{NewClientAddrs(s.cfg.TrustedProxies).Middleware,
		requestIDMiddleware(), s.observe}
	if s.cfg.Tracing != nil {
		chain = append(chain, s.traced)
	}
	return append(chain, s.recoverer, s.limits, s.gateMiddleware)
}

// traced makes a server span of each request (continuing an incoming
// traceparent's trace) and, once it is served, names the span after the
// request's operation, the label the access log and the metrics use.
func (s *Server) traced(next http.Handler) http.Handler {
	return s.cfg.Tracing.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		describeSpan(r)
	}), spanName)
}

// spanName is the name of a request's span: its operation label (as the
// access log's) once the operation or the route is known, the method until
// then.
func spanName(r *http.Request) string {
	op, route := "", routeOf(r)
	if rec := recordFrom(r.Context()); rec != nil {
		rec.mu.Lock()
		op = rec.operation
		rec.mu.Unlock()
	}
	if op == "" && route == "" {
		return r.Method
	}
	return operationLabel(op, route)
}

// routeOf is the route pattern of r: its operation's (noted by annotate,
// routed or run in-process), else the one the router matched ("" before
// routing).
func routeOf(r *http.Request) string {
	if rec := recordFrom(r.Context()); rec != nil {
		rec.mu.Lock()
		route := rec.route
		rec.mu.Unlock()
		if route != "" {
			return route
		}
	}
	if rc := chi.RouteContext(r.Context()); rc != nil {
		return rc.RoutePattern()
	}
	return ""
}

// describeSpan names the request's span after its operation and adds the
// route, the request id, the token's id and, on POST /mcp, the JSON-RPC
// method and tool (never a header, the query or the body).
func describeSpan(r *http.Request) {
	span := trace.SpanFromContext(r.Context())
	rec := recordFrom(r.Context())
	if !span.IsRecording() || rec == nil {
		return
	}
	route := routeOf(r)
	rec.mu.Lock()
	op, token, method, tool := rec.operation, rec.tokenID, rec.mcpMethod, rec.mcpTool
	rec.mu.Unlock()
	op = operationLabel(op, route)
	span.SetName(op)
	attrs := []attribute.KeyValue{attrOperation.String(op), attrRequestID.String(RequestID(r.Context()))}
	if route != "" {
		attrs = append(attrs, semconv.HTTPRoute(route))
	}
	if token != 0 {
		attrs = append(attrs, attrTokenID.String(strconv.FormatInt(token, 10)))
	}
	if method != "" {
		attrs = append(attrs, tracing.AttrMCPMethod.String(method))
	}
	if tool != "" {
		attrs = append(attrs, tracing.AttrToolName.String(tool))
	}
	span.SetAttributes(attrs...)
}
