package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/tracing"
)

// BenchmarkGatewayVerifyInProcess measures what the server adds to a
// request of /ai-gateway/verify, without the network: the root middleware
// chain (request id, access log and metrics, recovery, limits, network
// gate), routing, the HMAC and the lookup, the headers. Its reference,
// BenchmarkBare200InProcess, is a handler answering 200 through the same
// recorder.
func BenchmarkGatewayVerifyInProcess(b *testing.B) {
	e := apitest.New(b, apitest.Options{})
	k, err := e.Store.CreateGatewayKey(b.Context(), resources.Actor{Label: "ops:bench"},
		resources.NewGatewayKey{Name: "bench", Tier: new("pro")}, nil)
	if err != nil {
		b.Fatal(err)
	}
	e.Server.Changed(resources.GatewayKeyChanged(k.ID))
	benchInProcess(b, e.Server.Router(), k.Value, http.StatusOK)
}

// BenchmarkGatewayVerifyInProcessTraced is BenchmarkGatewayVerifyInProcess
// with tracing on: every span sampled and recorded, then dropped (no
// exporter), so it measures what the instrumentation adds.
func BenchmarkGatewayVerifyInProcessTraced(b *testing.B) {
	e := apitest.New(b, apitest.Options{Tracing: tracing.New(sdktrace.NewTracerProvider())})
	k, err := e.Store.CreateGatewayKey(b.Context(), resources.Actor{Label: "ops:bench"},
		resources.NewGatewayKey{Name: "bench", Tier: new("pro")}, nil)
	if err != nil {
		b.Fatal(err)
	}
	e.Server.Changed(resources.GatewayKeyChanged(k.ID))
	benchInProcess(b, e.Server.Router(), k.Value, http.StatusOK)
}

func BenchmarkBare200InProcess(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	benchInProcess(b, h, resources.NewGatewayKeyValue(), http.StatusOK)
}

func benchInProcess(b *testing.B, h http.Handler, key string, status int) {
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("GET", resources.GatewayVerifyPath, nil)
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != status {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
