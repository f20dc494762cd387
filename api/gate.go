package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"platformapi/resources"
)

// The API on/off switch is cached per replica and re-read when older than
// settingsTTL. A request waits for that read at most settingsFreshWait
// (counted from the read's start), then is answered with the last value read
// while the read goes on in the background, for up to settingsMaxStale: a
// slow or locked database never holds requests up for the switch. Without a
// value that fresh, a request waits at most settingsWait, then answers 503.
const (
	settingsTTL       = 500 * time.Millisecond
	settingsFreshWait = 100 * time.Millisecond
	settingsMaxStale  = 10 * time.Second
	settingsWait      = 2 * time.Second
)

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
	readAt   time.Time     // when enabled was read; zero: never
	pending  chan struct{} // closed when the running refresh ends; nil: none runs
	started  time.Time     // wall-clock start of the running refresh
	lastErr  error         // the last refresh's failure
}

// Enabled answers the switch: from the cache when fresh, else after the
// bounded wait for a (background) refresh described above.
func (s *apiSwitch) Enabled(ctx context.Context) (bool, error) {
	s.mu.Lock()
	age := s.now().Sub(s.readAt)
	if !s.readAt.IsZero() && age < settingsTTL {
		defer s.mu.Unlock()
		return s.enabled, nil
	}
	done := s.refresh()
	wait := settingsWait
	if !s.readAt.IsZero() && age < settingsMaxStale {
		wait = settingsFreshWait - time.Since(s.started)
	}
	s.mu.Unlock()
	if wait > 0 {
		timer := time.NewTimer(wait)
		select {
		case <-done:
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.readAt.IsZero() && s.now().Sub(s.readAt) < settingsMaxStale {
		return s.enabled, nil
	}
	return false, cmp.Or(s.lastErr, errors.New("reading the API switch takes too long"))
}

// refresh starts one background read of the switch unless one runs, and
// returns the channel closed when it ends. s.mu is held.
func (s *apiSwitch) refresh() <-chan struct{} {
	if s.pending != nil {
		return s.pending
	}
	done := make(chan struct{})
	s.pending, s.started = done, time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), settingsMaxStale)
		defer cancel()
		st, err := s.settings.Settings(ctx)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.lastErr = err; err == nil {
			s.enabled, s.readAt = st.APIEnabled, s.now()
		}
		s.pending = nil
		close(done)
	}()
	return done
}

// invalidate makes the next request read the switch from the database.
func (s *apiSwitch) invalidate() {
	s.mu.Lock()
	s.readAt = time.Time{}
	s.mu.Unlock()
}

// Changed applies one event of the change feed: cached credentials the
// change touches are dropped, an API switch is read again at once, and a
// changed gateway key is read again into the view of live keys (before
// Changed returns).
func (s *Server) Changed(ch resources.Change) {
	switch ch.Kind {
	case resources.ChangeAPISwitch:
		s.apiSwitch.invalidate()
	case resources.ChangeGatewayKey:
		s.gateway.Changed(ch.GatewayKeyID)
	case resources.ChangeToken:
		s.auth.live.Changed(ch.TokenID)
	}
	if s.cfg.CredentialCache != nil {
		s.cfg.CredentialCache.Changed(ch)
	}
}

// Resync drops everything cached from the database, for when the change
// feed may have missed events (the shared cache was unreachable); the view
// of live gateway keys is reloaded whole by RunGatewayKeys.
func (s *Server) Resync() {
	s.apiSwitch.invalidate()
	if s.cfg.CredentialCache != nil {
		s.cfg.CredentialCache.Flush("resync")
	}
	s.gateway.reloads.ask()
	s.auth.live.reloads.ask()
}

// LoadViews loads the in-memory views of the database a replica answers
// from: the live gateway keys behind /ai-gateway/verify (which answers 503
// until a load succeeded) and the live tokens an address refused for its
// failed authentications may still present. Call it once before serving;
// RunViews keeps them current.
func (s *Server) LoadViews(ctx context.Context) error {
	if err := s.gateway.Load(ctx); err != nil {
		return fmt.Errorf("load the gateway keys: %w", err)
	}
	if err := s.auth.live.Load(ctx); err != nil {
		return fmt.Errorf("load the live tokens: %w", err)
	}
	return nil
}

// RunViews reloads the views of LoadViews every re-check interval and on a
// resync, and writes the gateway keys' last uses every flush interval,
// until ctx ends; then it writes the last uses once more. Stop it after the
// HTTP server has drained, so no use is lost.
func (s *Server) RunViews(ctx context.Context) {
	done := make(chan struct{})
	go func() { defer close(done); s.auth.live.Run(ctx) }()
	s.gateway.Run(ctx)
	<-done
}

// gateMiddleware answers 404 not_found, exactly as an unknown path, to a
// client outside the allowed networks and to everyone while the API is off.
func (s *Server) gateMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.allowedNetwork(ClientAddr(r)) {
			s.notFound(w, r)
			return
		}
		if outsideSwitch(r.URL.Path) {
			next.ServeHTTP(w, r)
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

func (s *Server) allowedNetwork(addr netip.Addr) bool { return inNetworks(s.cfg.Networks, addr) }

// NetworkGate serves h only to clients in networks (nil: DefaultNetworks);
// others get a bare 404, for listeners beside the API's (--metrics-addr).
func NetworkGate(networks []netip.Prefix, h http.Handler) http.Handler {
	if networks == nil {
		networks = DefaultNetworks
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !inNetworks(networks, ClientAddr(r)) {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func inNetworks(networks []netip.Prefix, addr netip.Addr) bool {
	for _, p := range networks {
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
