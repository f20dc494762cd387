package api

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// apiMetrics are the Prometheus collectors of the HTTP layer. Labels are
// bounded: operation is always a kebab-case name — an operation id, a plain
// route's name (openapi-json, docs, docs-asset), "mcp", "healthz",
// "readyz", "metrics" or "unmatched"; status is the HTTP status.
type apiMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	refusals prometheus.Counter
	replays  prometheus.Counter
	// byOperation caches each operation's series (*opSeries).
	byOperation sync.Map
}

// newMetrics registers the HTTP layer's collectors on reg.
func newMetrics(reg prometheus.Registerer) *apiMetrics {
	m := &apiMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "platformapi_http_requests_total",
			Help: "HTTP requests answered, by operation and status (499: the client hung up). " +
				"An MCP tool call is counted as POST /mcp (operation mcp) and as its in-process GET."},
			[]string{"operation", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "platformapi_http_request_duration_seconds",
			Help: "Time to answer an HTTP request, by operation.", Buckets: prometheus.DefBuckets},
			[]string{"operation"}),
		refusals: prometheus.NewCounter(prometheus.CounterOpts{Name: "platformapi_rate_limit_refusals_total",
			Help: "Requests refused with 429 rate_limited because the token's budget was spent."}),
		replays: prometheus.NewCounter(prometheus.CounterOpts{Name: "platformapi_idempotency_replays_total",
			Help: "Keyed requests answered with the stored answer of an earlier request (Idempotent-Replayed: true)."}),
	}
	reg.MustRegister(m.requests, m.duration, m.refusals, m.replays)
	return m
}

// observe counts one answered request, through the series of its
// operation and status looked up once (labels are bounded, so are they).
func (m *apiMetrics) observe(operation string, status int, d time.Duration) {
	o, ok := m.byOperation.Load(operation)
	if !ok {
		o, _ = m.byOperation.LoadOrStore(operation, &opSeries{
			duration: m.duration.WithLabelValues(operation), requests: map[int]prometheus.Counter{}})
	}
	s := o.(*opSeries)
	s.duration.Observe(d.Seconds())
	s.counter(m.requests, operation, status).Inc()
}

// opSeries are one operation's series: its duration histogram and a
// request counter per status.
type opSeries struct {
	duration prometheus.Observer
	mu       sync.RWMutex
	requests map[int]prometheus.Counter
}

func (s *opSeries) counter(vec *prometheus.CounterVec, operation string, status int) prometheus.Counter {
	s.mu.RLock()
	c, ok := s.requests[status]
	s.mu.RUnlock()
	if ok {
		return c
	}
	c = vec.WithLabelValues(operation, strconv.Itoa(status))
	s.mu.Lock()
	s.requests[status] = c
	s.mu.Unlock()
	return c
}

// MetricsHandler serves g in the Prometheus exposition format; gathering
// never touches the database (pool statistics are read from memory).
func MetricsHandler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{Timeout: 5 * time.Second})
}
