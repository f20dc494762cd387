// Package tracing is platformapi's OpenTelemetry tracing: configured by the
// standard OTEL_* environment variables, exported over OTLP (HTTP/protobuf),
// with W3C trace context (traceparent, baggage) in and out.
//
// A nil *Tracing is tracing off, and every adapter tests for nil once, when
// it is built: with tracing off nothing is installed (no middleware, query
// hook, job middleware or transport), so the request path is the one of a
// build without tracing.
package tracing

import (
	"context"
	"log/slog"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// InstrumentationName names the tracer of platformapi's own spans (the
// MCP tool calls); the libraries' spans carry their own names.
const InstrumentationName = "platformapi"

// Tracing is the process's tracing when it is on: the provider every span
// is made with and the propagator that carries trace context over HTTP.
// Its methods are safe for concurrent use.
type Tracing struct {
	provider   trace.TracerProvider
	propagator propagation.TextMapPropagator
	shutdown   func(context.Context) error
}

// New is tracing on with provider tp (tests pass one recording spans in
// memory; FromEnv makes the exporting one) and the W3C propagators.
// Shutdown does nothing to tp.
func New(tp trace.TracerProvider) *Tracing {
	return &Tracing{provider: tp, propagator: Propagator(),
		shutdown: func(context.Context) error { return nil }}
}

// Propagator is the W3C trace context and baggage, the propagation of
// every traced request and call.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Provider is the tracer provider every span is made with.
func (t *Tracing) Provider() trace.TracerProvider { return t.provider }

// Propagator is the propagator reading and writing trace context headers.
func (t *Tracing) Propagator() propagation.TextMapPropagator { return t.propagator }

// Tracer is the tracer of platformapi's own spans.
func (t *Tracing) Tracer() trace.Tracer { return t.provider.Tracer(InstrumentationName) }

// Handler wraps h in OpenTelemetry's HTTP server instrumentation: a server
// span per request, continuing the trace of an incoming traceparent, with
// the request's method and the answer's status code, named by name (asked
// as the request starts, and again once it is served when the router noted
// the request's pattern; the caller may rename the span itself through
// trace.SpanFromContext).
func (t *Tracing) Handler(h http.Handler, name func(*http.Request) string) http.Handler {
	opts := append(t.options(), otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		return name(r)
	}))
	return otelhttp.NewHandler(h, "http", opts...)
}

// Client is the HTTP client of the calls to outside systems (code host,
// pipeline webhook, monitoring, node agents): a client span per call whose
// traceparent the request carries. Nil when t is nil (tracing off), which
// every adapter takes for its plain client.
func (t *Tracing) Client() *http.Client {
	if t == nil {
		return nil
	}
	return &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport, t.options()...)}
}

// options are the instrumentation's options: this provider and propagator,
// and no metrics (Prometheus has those).
func (t *Tracing) options() []otelhttp.Option {
	return []otelhttp.Option{otelhttp.WithTracerProvider(t.provider), otelhttp.WithPropagators(t.propagator),
		otelhttp.WithMeterProvider(noop.NewMeterProvider())}
}

// LogErrors sends OpenTelemetry's own errors (a failed export, a full
// queue) to log at warn, one JSON line like every other, instead of Go's
// standard logger (plain text), OpenTelemetry's default. Process-wide:
// OpenTelemetry has one error handler. Nothing when t or log is nil.
func (t *Tracing) LogErrors(log *slog.Logger) {
	if t == nil || log == nil {
		return
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: OpenTelemetry error", "error", err)
	}))
}

// Shutdown exports the spans still buffered and stops the exporter; nil
// when t is nil. Call it once, after the servers and the worker stopped.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.shutdown(ctx)
}

// Attributes the server's spans share (OpenTelemetry's conventions for MCP
// and generative AI tools): on the POST /mcp span and on a tool call's.
const (
	AttrMCPMethod = attribute.Key("mcp.method.name")
	AttrToolName  = attribute.Key("gen_ai.tool.name")
)
