package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"platformapi/resources"
)

// readyTimeout bounds the readiness check, the wait for a pooled connection
// included.
const readyTimeout = time.Second

// Operability paths, outside /api/v1 and the API switch (the network gate
// still applies).
const (
	HealthzPath = "/healthz"
	ReadyzPath  = "/readyz"
	MetricsPath = "/metrics"
)

// outsideSwitch reports whether path is served whether or not the API is
// on: the operability paths, the AI gateway's verify (and paths below it)
// and the people's portal.
func outsideSwitch(path string) bool {
	switch path {
	case HealthzPath, ReadyzPath, MetricsPath, resources.GatewayVerifyPath:
		return true
	}
	if path == "/portal" || strings.HasPrefix(path, "/portal/") { // the people's portal
		return true
	}
	rest, ok := strings.CutPrefix(path, resources.GatewayVerifyPath)
	return ok && strings.HasPrefix(rest, "/")
}

// ReadyState is the body of GET /readyz.
type ReadyState struct {
	Status     string   `json:"status"`               // ready, not_ready or stopping
	Database   string   `json:"database,omitempty"`   // ok or unreachable; stopping: none
	Migrations string   `json:"migrations,omitempty"` // ok, pending or unknown; stopping: none
	Pending    []string `json:"pending,omitempty"`    // migrations not applied
}

// registerOperability mounts /healthz, /readyz and, when a gatherer is
// configured, /metrics on the root router.
func (s *Server) registerOperability() {
	s.router.Get(HealthzPath, s.healthz)
	s.router.Get(ReadyzPath, s.readyz)
	if s.cfg.MetricsGatherer != nil {
		h := MetricsHandler(s.cfg.MetricsGatherer)
		s.router.Get(MetricsPath, func(w http.ResponseWriter, r *http.Request) {
			noteOperation(r.Context(), opMetrics)
			h.ServeHTTP(w, r)
		})
	}
}

// healthz answers 200 while the process can serve HTTP; it reads nothing.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	noteOperation(r.Context(), opHealthz)
	writeHealth(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when the database answers within readyTimeout and every
// migration this binary carries is applied, else 503 with Retry-After; 503
// "stopping" at once while the server stops (Config.Stopping), so the load
// balancer stops sending before the listener closes.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	noteOperation(r.Context(), opReadyz)
	if s.stopping() {
		w.Header().Set("Retry-After", "5")
		writeHealth(w, http.StatusServiceUnavailable, ReadyState{Status: "stopping"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	pending, err := s.svc.Readiness.PendingMigrations(ctx)
	st := ReadyState{Status: "ready", Database: "ok", Migrations: "ok", Pending: pending}
	switch {
	case err != nil:
		st.Database, st.Migrations = "unreachable", "unknown"
		loggerFrom(r.Context(), s.cfg.Logger).Warn("readiness: database unreachable", "error", err)
	case len(pending) > 0:
		st.Migrations = "pending"
		loggerFrom(r.Context(), s.cfg.Logger).Warn("readiness: migrations pending",
			"pending", strings.Join(pending, ","))
	}
	status := http.StatusOK
	if st.Database != "ok" || st.Migrations != "ok" {
		st.Status, status = "not_ready", http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "5")
	}
	writeHealth(w, status, st)
}

// stopping reports whether Config.Stopping is closed.
func (s *Server) stopping() bool {
	select {
	case <-s.cfg.Stopping:
		return true
	default:
		return false
	}
}

func writeHealth(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", noStore)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
