package api

import (
	"context"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"platformapi/resources"
)

// settingsTTL bounds how stale the API on/off switch can be on a replica.
const settingsTTL = 500 * time.Millisecond

// DefaultNetworks are the client networks the API answers when none are
// configured: loopback and the private ranges.
var DefaultNetworks = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("fc00::/7"),
}

// apiSwitch caches the platform setting that turns the API on or off.
type apiSwitch struct {
	settings resources.SettingsReader
	now      func() time.Time
	mu       sync.Mutex
	enabled  bool
	readAt   time.Time
}

// Enabled reads the switch, from the database at most every settingsTTL.
func (s *apiSwitch) Enabled(ctx context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if !s.readAt.IsZero() && now.Sub(s.readAt) < settingsTTL {
		return s.enabled, nil
	}
	st, err := s.settings.Settings(ctx)
	if err != nil {
		return false, err
	}
	s.enabled, s.readAt = st.APIEnabled, now
	return s.enabled, nil
}

// gateMiddleware answers 404 not_found, exactly as an unknown path, to a
// client outside the allowed networks and to everyone while the API is off.
func (s *Server) gateMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.allowedNetwork(ClientAddr(r.RemoteAddr)) {
			s.notFound(w, r)
			return
		}
		on, err := s.apiSwitch.Enabled(r.Context())
		if err != nil {
			s.WriteError(w, r, &Problem{Status: http.StatusServiceUnavailable, Code: resources.CodeUnavailable,
				Detail: "the service cannot read its settings; retry shortly", retryAfter: time.Second, cause: err})
			return
		}
		if !on {
			s.notFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) allowedNetwork(addr netip.Addr) bool {
	for _, p := range s.cfg.Networks {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.WriteError(w, r, &Problem{Status: http.StatusNotFound, Code: resources.CodeNotFound,
		Detail: "no resource at " + r.URL.Path})
}
