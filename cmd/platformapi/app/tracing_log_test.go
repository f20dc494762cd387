package app

import (
	"encoding/json"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"platformapi/bunstore/pgtest"
	"platformapi/resources/testkit"
)

// TestTracing_ExportFailure_LoggedAsJSONByTheServersLogger: a collector
// that refuses spans is reported in the server's log, as JSON like every
// line (README, "Operability"), not as a plain-text line of Go's standard
// logger, OpenTelemetry's default.
func TestTracing_ExportFailure_LoggedAsJSONByTheServersLogger(t *testing.T) {
	otlp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "refused", http.StatusBadRequest)
	}))
	t.Cleanup(otlp.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
	var std, logs testkit.LockedBuffer
	prev := log.Writer()
	log.SetOutput(&std)
	t.Cleanup(func() { log.SetOutput(prev) })
	m, err := Open(t.Context(), Options{DatabaseURL: pgtest.DSN(t),
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	_, span := m.tracing.Tracer().Start(t.Context(), "probe")
	span.End()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String()+std.String(), "400") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s := std.String(); s != "" {
		t.Errorf("plain-text lines from the standard logger:\n%s", s)
	}
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, "400") && json.Unmarshal([]byte(l), &line) == nil {
			break
		}
	}
	if msg, _ := line["msg"].(string); line["level"] != "WARN" || !strings.Contains(msg, "tracing") {
		t.Fatalf("no JSON warning about the failed export in the server's log:\n%s", logs.String())
	}
}
