// Package portal serves the people's portal at /portal/: server-rendered
// pages for people signed in with OpenID Connect, their sessions kept in
// PostgreSQL (resources.Sessions). It mounts on the API's root router,
// outside /api/v1 and its switch.
package portal

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"platformapi/api"
	"platformapi/resources"
)

// Path is where the portal is served; every route and cookie lies under it.
const Path = "/portal/"

// Cookie names: the session and the sign-in under way (state, nonce and
// PKCE verifier, signed).
const (
	sessionCookie = "platformapi_session"
	loginCookie   = "platformapi_login"
)

// contentSecurityPolicy allows the pages their own style sheet, logo and
// copy-button script and forms, nothing inline, nothing from elsewhere, no
// framing (frame-ancestors 'none').
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Config configures the portal.
type Config struct {
	// Issuer is the OpenID provider's issuer URL; empty: sign-in is not
	// configured and the sign-in page says so.
	Issuer       string
	ClientID     string
	ClientSecret string
	// BaseURL is the portal's external base URL (scheme and host, e.g.
	// https://platform.example.com); empty: taken from each request, and
	// sign-in then starts only for a request from and to loopback.
	BaseURL  string
	Sessions resources.Sessions
	// Actions carries out what a signed-in person does (the portal CLI's
	// implementation: one rule each); Store reads what the pages show.
	Actions resources.Portal
	Store   Store
	// Licence verifies licence bundles installed from the Administration
	// page (the keys the server trusts).
	Licence resources.LicenceVerifier
	// LoginKey signs the sign-in cookie (at least 32 bytes).
	LoginKey []byte
	Now      func() time.Time // nil: time.Now
	Logger   *slog.Logger     // nil: slog.Default()

	// Demo adds the demo sign-in at /portal/demo-login (serve --demo only):
	// pick an active person and be signed in as them.
	Demo bool
}

// Handler serves the portal's routes.
type Handler struct {
	cfg    Config
	oidc   *oidcClient // nil without an issuer
	mux    http.Handler
	routes []Route // in the order registered
}

// Route is one of the portal's routes: its pattern (method and path) and
// what it does, as the README lists it.
type Route struct {
	Pattern string
	Doc     string
}

// Routes are the portal's routes in the order registered (the demo
// sign-in's only in demo mode).
func (h *Handler) Routes() []Route { return slices.Clone(h.routes) }

// handle registers handler under pattern on mux with what it does.
func (h *Handler) handle(mux *http.ServeMux, pattern string, handler http.HandlerFunc, doc string) {
	mux.HandleFunc(pattern, handler)
	h.routes = append(h.routes, Route{Pattern: pattern, Doc: doc})
}

// New builds the portal handler.
func New(cfg Config) *Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &Handler{cfg: cfg}
	if cfg.Issuer != "" {
		h.oidc = &oidcClient{cfg: &h.cfg}
	}
	mux := http.NewServeMux()
	h.handle(mux, "GET /portal/{$}", labelled("portal-index", h.index),
		"**Profile**: who is signed in and the pages they may use; or a Sign in "+
			"link (and the demo sign-in in demo mode)")
	h.handle(mux, "GET /portal/login", labelled("portal-login", h.login),
		"starts a sign-in at the OpenID provider (code + PKCE S256, state, nonce)")
	h.handle(mux, "GET /portal/callback", labelled("portal-callback", h.callback),
		"where the provider sends the browser back; starts the session of an "+
			"active person with a verified e-mail")
	h.handle(mux, "POST /portal/logout", labelled("portal-logout", h.logout),
		"signs out (the session ends at once)")
	h.handle(mux, "GET /portal/style.css", labelled("portal-style", h.style),
		"the style sheet in the installation's brand colour")
	h.handle(mux, "GET /portal/copy.js", labelled("portal-script", h.script),
		"the copy button's script (the pages work without it)")
	h.handle(mux, "GET /portal/logo", labelled("portal-logo", h.logo),
		"the brand's logo (404 while none is set)")
	h.routePages(mux)
	h.demoRoutes(mux)
	mux.HandleFunc("/portal", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Path, http.StatusMovedPermanently)
	})
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.refuse(w, r, http.StatusForbidden, "This request came from another site and was refused.")
	}))
	h.mux = cop.Handler(h.routed(mux))
	return h
}

// requestTimeout bounds a portal request, the provider's answers included
// (the portal lies outside the API's request deadline).
const requestTimeout = 30 * time.Second

// labelled is next labelled id in the access log and the metrics.
func labelled(id string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		api.NoteOperation(r.Context(), id)
		next(w, r)
	}
}

// ServeHTTP serves a portal page with the security headers every page
// carries, within requestTimeout; a posted form is read within its bound
// first (readForm).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	api.NoteOperation(ctx, "portal") // until a route names itself
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	if h.readForm(w, r) {
		h.mux.ServeHTTP(w, r)
	}
}

// index shows who is signed in with a sign-out button, or a sign-in link.
func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	v := view{Title: "Profile", Notice: notice(r),
		Page: indexPage{Configured: h.oidc != nil, Demo: h.cfg.Demo}}
	s, ok, err := h.session(w, r)
	if err != nil {
		h.fault(w, r, "reading a session", err)
		return
	}
	if ok {
		v.Person = &s
	}
	h.render(w, r, http.StatusOK, indexTemplate, v)
}

// session returns the request's live session (ok false: none); a cookie of
// an ended session is cleared. A store that cannot read the session (err)
// ends nothing: the cookie stays for the next request.
func (h *Handler) session(w http.ResponseWriter, r *http.Request) (
	s resources.Session, ok bool, err error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return resources.Session{}, false, nil
	}
	s, err = h.cfg.Sessions.Session(r.Context(), resources.SessionID(c.Value))
	if errors.Is(err, resources.ErrSessionEnded) {
		h.setCookie(w, r, sessionCookie, "", -1)
		return resources.Session{}, false, nil
	}
	if err != nil {
		return resources.Session{}, false, err
	}
	return s, true, nil
}

// logout ends the request's session and goes back to the portal's page.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		err := h.cfg.Sessions.EndSession(r.Context(), actorOf(r), resources.SessionID(c.Value))
		if err != nil {
			h.fault(w, r, "ending a session", err)
			return
		}
	}
	h.setCookie(w, r, sessionCookie, "", -1)
	done(w, r, Path, "signed-out")
}

// actorOf is the request's id and client address, for the audit row.
func actorOf(r *http.Request) resources.Actor {
	return resources.Actor{RequestID: api.RequestID(r.Context()),
		SourceIP: api.ClientAddr(r).String()}
}

// setCookie sets (maxAge > 0), or clears (maxAge < 0), a portal cookie:
// HttpOnly, SameSite=Lax, Path /portal/, Secure unless the request is plain
// HTTP on loopback and no https --portal-url says browsers come over HTTPS
// (a proxy on the same host may forward to a loopback Host).
func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	https := strings.HasPrefix(strings.ToLower(h.cfg.BaseURL), "https://")
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: Path, MaxAge: maxAge, HttpOnly: true,
		Secure: https || !plainLoopback(r), SameSite: http.SameSiteLaxMode})
}

// plainLoopback reports whether r came over plain HTTP from a loopback peer
// for a loopback host (a proxy in front forwards another host).
func plainLoopback(r *http.Request) bool { return r.TLS == nil && loopbackRequest(r) }

// loopbackRequest reports whether r came from a loopback peer (the client
// address, behind trusted proxies the forwarded one) for a loopback host:
// a browser on this machine.
func loopbackRequest(r *http.Request) bool {
	if !api.ClientAddr(r).IsLoopback() {
		return false
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// fault answers a failure of ours with a plain page, logging the cause.
func (h *Handler) fault(w http.ResponseWriter, r *http.Request, doing string, err error) {
	h.cfg.Logger.Error("portal: "+doing, "error", err, "request_id", api.RequestID(r.Context()))
	h.refuse(w, r, http.StatusServiceUnavailable,
		"The portal could not do this just now; try again shortly.")
}

// refuse answers a plain page saying why, with the request's id (the one
// the log has) for the person to quote.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, message string) {
	h.render(w, nil, status, refusalTemplate, view{Title: "Refused", Problem: message,
		RequestID: api.RequestID(r.Context())})
}
