package app

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"platformapi/bunstore/pgtest"
	"platformapi/resources"
	"platformapi/resources/nodeagent"
	"platformapi/resources/tracing/tracingtest"
)

// TestTracing_OutgoingCalls_CarryTheTraceparent: with tracing on, the
// clients the server builds for the code host, the release pipeline and the
// node agents send the caller's trace on (W3C traceparent) and record a
// client span each (the monitoring's is in
// TestServe_OTLPEndpointSet_RequestsAndMonitoringCallsTracedAndFlushedOnClose).
func TestTracing_OutgoingCalls_CarryTheTraceparent(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // path → traceparent
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Get("traceparent")
		mu.Unlock()
		http.Error(w, "fake outside system", http.StatusServiceUnavailable)
	}))
	defer outside.Close()
	rec := tracingtest.New(t)
	m, err := Open(t.Context(), Options{DatabaseURL: pgtest.DSN(t), Logger: slog.New(slog.DiscardHandler),
		Tracing: rec.Tracing})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	o := ServeOptions{GitLabURL: outside.URL + "/gitlab", GitLabToken: "t", WebhookURL: outside.URL + "/pipeline",
		WebhookSecret: "s"}
	ctx, span := rec.Tracing.Tracer().Start(t.Context(), "caller")
	_, _ = m.codeHost(o).FindGroup(ctx, "acme")
	_ = m.pipeline(o).Dispatch(ctx, resources.PromotionDispatch{ReleaseOperationID: 1, TargetEnv: "dev"})
	_, _ = nodeagent.NewClient(m.tracing.Client()).Report(ctx, resources.AgentEndpoint{Hostname: "gpu-1",
		URL: outside.URL + "/agent", Key: "pnk_x"})
	span.End()
	want := span.SpanContext().TraceID().String()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("calls reaching the outside: %v", seen)
	}
	for path, tp := range seen {
		if len(tp) != 55 || tp[3:35] != want {
			t.Errorf("%s: traceparent %q, want the caller's trace %s", path, tp, want)
		}
	}
}
