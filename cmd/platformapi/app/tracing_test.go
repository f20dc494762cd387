package app

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

// otlpCollector is a fake OTLP/HTTP collector keeping the names of the
// spans it receives and the service.name of their resource.
type otlpCollector struct {
	mu       sync.Mutex
	spans    []string
	services []string
}

func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	if proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not OTLP", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.Resource.Attributes {
			if kv.Key == "service.name" {
				c.services = append(c.services, kv.Value.GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.spans = append(c.spans, s.Name)
			}
		}
	}
}

// tracedMain opens a Main whose tracing the environment turns on, exporting
// to c, with its handler built (monitoring at promURL) and the API on; it
// returns the handler and an administrator's token reading AI nodes.
func tracedMain(t *testing.T, c *otlpCollector, promURL string) (*Main, http.Handler, string) {
	otlp := httptest.NewServer(c)
	t.Cleanup(otlp.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.URL)
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", "tracing-test-pepper-0123456789")
	m, err := Open(t.Context(), Options{DatabaseURL: pgtest.DSN(t), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if m.tracing == nil {
		m.Close()
		t.Fatal("an OTLP endpoint is set and tracing is off")
	}
	if err := m.migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	h, err := m.Handler(t.Context(), ServeOptions{PrometheusURL: promURL}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	admin := resources.Actor{Label: "a@example.test"}
	p := m.Portal()
	if _, err := p.CreateUser(t.Context(), resources.Actor{}, resources.NewUser{Email: "a@example.test",
		DisplayName: "A", Roles: []string{"admin"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetAPIEnabled(t.Context(), admin, true); err != nil {
		t.Fatal(err)
	}
	tok, err := p.CreateToken(t.Context(), admin,
		resources.NewToken{Name: "t", Days: 1, Scopes: []string{resources.PermAIRead}})
	if err != nil {
		t.Fatal(err)
	}
	return m, h, tok.Value
}

func TestServe_OTLPEndpointSet_RequestsAndMonitoringCallsTracedAndFlushedOnClose(t *testing.T) {
	var mu sync.Mutex
	var traceparents []string
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparents = append(traceparents, r.Header.Get("traceparent"))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	defer prom.Close()
	c := &otlpCollector{}
	m, h, tok := tracedMain(t, c, prom.URL)
	req := httptest.NewRequest("GET", "/api/v1/ai/nodes", nil)
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("Authorization", "Bearer "+tok)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	m.Close() // exports what the batcher holds
	mu.Lock()
	defer mu.Unlock()
	if len(traceparents) != 1 || len(traceparents[0]) != 55 {
		t.Fatalf("traceparents at monitoring: %q", traceparents)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range []string{"list-ai-nodes", "SELECT", "HTTP POST"} { // server, SQL, the Prometheus query
		if !slices.Contains(c.spans, name) {
			t.Errorf("no span %q exported: %q", name, c.spans)
		}
	}
	if len(c.services) == 0 || c.services[0] != "platformapi" {
		t.Fatalf("service.name %q", c.services)
	}
}

func TestOpen_NoOTLPEndpoint_TracingOff(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	m, err := Open(t.Context(), Options{DatabaseURL: pgtest.DSN(t), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.tracing != nil || m.tracing.Client() != nil {
		t.Fatalf("tracing on without an endpoint: %v", m.tracing)
	}
}
