// Package tracingtest records spans in memory for tests: tracing on, with
// every span sampled and kept by an OpenTelemetry SpanRecorder.
package tracingtest

import (
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"platformapi/resources/testkit"
	"platformapi/resources/tracing"
)

// Recorder is tracing on whose spans stay in memory.
type Recorder struct {
	*tracetest.SpanRecorder
	Tracing *tracing.Tracing
}

// New is tracing on recording every span in memory until the test ends.
func New(t testing.TB) *Recorder {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	return &Recorder{SpanRecorder: sr, Tracing: tracing.New(tp)}
}

// Find returns the ended spans that match, in the order they ended.
func (r *Recorder) Find(match func(sdktrace.ReadOnlySpan) bool) []sdktrace.ReadOnlySpan {
	return slices.DeleteFunc(r.Ended(), func(s sdktrace.ReadOnlySpan) bool { return !match(s) })
}

// Wait returns the first ended span that matches, waiting up to testkit.DefaultWait
// for it (a span ends when its handler returns, possibly after the client
// read the answer); what describes it when the test fails.
func (r *Recorder) Wait(t testing.TB, what string, match func(sdktrace.ReadOnlySpan) bool) sdktrace.ReadOnlySpan {
	t.Helper()
	var found sdktrace.ReadOnlySpan
	testkit.Eventually(t, 0, what, func() bool {
		if spans := r.Find(match); len(spans) > 0 {
			found = spans[0]
		}
		return found != nil
	})
	return found
}

// Named matches a span by its name.
func Named(name string) func(sdktrace.ReadOnlySpan) bool {
	return func(s sdktrace.ReadOnlySpan) bool { return s.Name() == name }
}

// ChildOf matches the spans whose parent is parent.
func ChildOf(parent trace.SpanContext) func(sdktrace.ReadOnlySpan) bool {
	return func(s sdktrace.ReadOnlySpan) bool {
		return s.Parent().SpanID() == parent.SpanID() && s.Parent().TraceID() == parent.TraceID()
	}
}

// Attr is the span's attribute key (the zero Value when it has none).
func Attr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// Names are the names of spans, in their order.
func Names(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name()
	}
	return out
}
