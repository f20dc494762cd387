package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"platformapi/resources/tracing"
)

func TestEnabled_OnlyWithAnEndpoint_AndNotDisabled(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		want bool
	}{
		"nothing set": {nil, false},
		"endpoint":    {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		"traces endpoint": {map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"},
			true},
		"service name only": {map[string]string{"OTEL_SERVICE_NAME": "api"}, false},
		"sdk disabled": {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
			"OTEL_SDK_DISABLED": "TRUE"}, false},
		"sdk not disabled": {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
			"OTEL_SDK_DISABLED": "false"}, true},
		"exporter none": {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
			"OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tracing.Enabled(func(k string) string { return tc.env[k] }); got != tc.want {
				t.Fatalf("Enabled = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFromEnv_Off_IsNilAndEveryMethodOfNilInstallsNothing(t *testing.T) {
	tr, err := tracing.FromEnv(t.Context(), func(string) string { return "" }, "v1")
	if err != nil || tr != nil {
		t.Fatalf("FromEnv without an endpoint: %v, %v", tr, err)
	}
	if tr.Client() != nil || tr.Shutdown(t.Context()) != nil {
		t.Fatal("a nil Tracing's client or shutdown is not nothing")
	}
}

func TestFromEnv_RefusesAnExporterOrProtocolItDoesNotSpeak(t *testing.T) {
	for _, kv := range [][2]string{{"OTEL_TRACES_EXPORTER", "zipkin"}, {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"}} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", kv[0]: kv[1]}
		if tr, err := tracing.FromEnv(t.Context(), func(k string) string { return env[k] }, "v1"); err == nil {
			_ = tr.Shutdown(t.Context())
			t.Errorf("%s=%s accepted", kv[0], kv[1])
		}
	}
}

// collector is a fake OTLP/HTTP collector keeping what it receives.
type collector struct {
	mu   sync.Mutex
	got  []*coltrace.ExportTraceServiceRequest
	path []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := &coltrace.ExportTraceServiceRequest{}
	if r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, req) != nil {
		http.Error(w, "not OTLP protobuf", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.got, c.path = append(c.got, req), append(c.path, r.URL.Path)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func TestFromEnv_ExportsOverOTLPHTTP_WithServiceNameAndVersion(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL) // the exporter reads it itself
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	tr, err := tracing.FromEnv(context.Background(), os.Getenv, "v1.2.3")
	if err != nil || tr == nil {
		t.Fatalf("FromEnv: %v, %v", tr, err)
	}
	_, span := tr.Tracer().Start(t.Context(), "one span")
	span.End()
	if err := tr.Shutdown(t.Context()); err != nil { // flushes the batch
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) != 1 || c.path[0] != "/v1/traces" {
		t.Fatalf("collector received %d exports at %v", len(c.got), c.path)
	}
	rs := c.got[0].ResourceSpans[0]
	attrs := map[string]string{}
	for _, kv := range rs.Resource.Attributes {
		attrs[kv.Key] = kv.Value.GetStringValue()
	}
	want := map[string]string{"service.name": "platformapi", "service.version": "v1.2.3",
		"deployment.environment.name": "test"}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("resource %s = %q, want %q", k, attrs[k], v)
		}
	}
	if diff := cmp.Diff("one span", rs.ScopeSpans[0].Spans[0].Name); diff != "" {
		t.Fatal(diff)
	}
}

func TestFromEnv_ServiceNameFromTheEnvironment(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/v1/traces")
	t.Setenv("OTEL_SERVICE_NAME", "platformapi-eu1")
	tr, err := tracing.FromEnv(context.Background(), os.Getenv, "v1")
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.Tracer().Start(t.Context(), "s")
	span.End()
	if err := tr.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) != 1 {
		t.Fatalf("collector received %d exports", len(c.got))
	}
	name := ""
	for _, kv := range c.got[0].ResourceSpans[0].Resource.Attributes {
		if kv.Key == "service.name" {
			name = kv.Value.GetStringValue()
		}
	}
	if name != "platformapi-eu1" {
		t.Fatalf("service.name %q", name)
	}
}
