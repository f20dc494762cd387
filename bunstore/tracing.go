package bunstore

import (
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	"github.com/uptrace/bun/extra/bunotel"
	"go.opentelemetry.io/otel/metric/noop"

	"platformapi/resources/tracing"
)

// SetTracing turns tracing on for the store (t nil: leaves it off, adding
// nothing): a client span per SQL statement (bun's OpenTelemetry query hook,
// the statement without its arguments; the store's own prepared statements
// report to the same hook) and, on the job clients built after
// it, a span per job inserted and worked (River's OpenTelemetry middleware,
// the trace context carried in the job's metadata and the work span linked
// to the span that enqueued it). Call it once, before the store is used.
func (s *Store) SetTracing(t *tracing.Tracing) {
	if t == nil {
		return
	}
	s.tracing = t
	s.hook = bunotel.NewQueryHook(bunotel.WithTracerProvider(t.Provider()),
		bunotel.WithMeterProvider(noop.NewMeterProvider()), bunotel.WithDBName("platformapi"))
	s.db.AddQueryHook(s.hook)
}

// jobMiddleware is the middleware of the store's River clients: River's
// OpenTelemetry middleware with tracing on, else none.
func (s *Store) jobMiddleware() []rivertype.Middleware {
	if s.tracing == nil {
		return nil
	}
	return []rivertype.Middleware{otelriver.NewMiddleware(&otelriver.MiddlewareConfig{
		TracerProvider: s.tracing.Provider(), MeterProvider: noop.NewMeterProvider(),
		EnableTracePropagation: true, EnableWorkSpanJobKindSuffix: true})}
}
