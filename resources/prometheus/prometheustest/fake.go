// Package prometheustest is a fake Prometheus HTTP API for tests: an
// httptest server answering POST/GET /api/v1/query with instant-vector
// results in Prometheus's own JSON shape, with a call counter and faults
// (HTTP errors, slowness, error envelopes).
package prometheustest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"platformapi/resources/prometheus"
)

// Sample is one element of an instant vector.
type Sample struct {
	Metric map[string]string
	Value  string // "0.42", "NaN", …
}

// Field is the sample of one live field for an instance ("host:port"),
// with extra labels as name/value pairs: what Prometheus answers for the
// adapter's query.
func Field(instance, field string, v float64, labels ...string) Sample {
	m := map[string]string{"instance": instance, prometheus.FieldLabel: field}
	for i := 0; i+1 < len(labels); i += 2 {
		m[labels[i]] = labels[i+1]
	}
	return Sample{Metric: m, Value: strconv.FormatFloat(v, 'f', -1, 64)}
}

// Fake is a fake Prometheus. It is safe for concurrent use.
type Fake struct {
	URL     string
	srv     *httptest.Server
	mu      sync.Mutex
	samples []Sample
	status  int           // != 0: answer this HTTP status with an error envelope
	delay   time.Duration // wait before answering
	queries []string
	forms   []map[string][]string
}

// New starts a fake Prometheus that the test closes at its end.
func New(t testing.TB) *Fake {
	f := &Fake{}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL, f.srv = srv.URL, srv
	return f
}

// Close shuts the fake down: every later query finds nothing listening.
func (f *Fake) Close() { f.srv.Close() }

// Set replaces the vector every query answers.
func (f *Fake) Set(samples ...Sample) { f.mu.Lock(); f.samples = samples; f.mu.Unlock() }

// Fail makes every query answer status (500, 503, 422 …); 0 heals.
func (f *Fake) Fail(status int) { f.mu.Lock(); f.status = status; f.mu.Unlock() }

// SetDelay makes every query wait d before answering.
func (f *Fake) SetDelay(d time.Duration) { f.mu.Lock(); f.delay = d; f.mu.Unlock() }

// Calls is how many queries reached the fake.
func (f *Fake) Calls() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.queries) }

// LastQuery is the PromQL of the last query and its form (or nil).
func (f *Fake) LastQuery() (string, map[string][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queries) == 0 {
		return "", nil
	}
	return f.queries[len(f.queries)-1], f.forms[len(f.forms)-1]
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" || (r.Method != http.MethodPost && r.Method != http.MethodGet) || r.ParseForm() != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	f.mu.Lock()
	f.queries = append(f.queries, r.Form.Get("query"))
	f.forms = append(f.forms, r.Form)
	samples, status, delay := f.samples, f.status, f.delay
	f.mu.Unlock()
	select {
	case <-time.After(delay):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if status != 0 {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "internal", "error": "injected fault"})
		return
	}
	result := make([]map[string]any, 0, len(samples))
	now := float64(time.Now().UnixMilli()) / 1000
	for _, s := range samples {
		result = append(result, map[string]any{"metric": s.Metric, "value": []any{now, s.Value}})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success",
		"data": map[string]any{"resultType": "vector", "result": result}})
}
