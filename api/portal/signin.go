package portal

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"platformapi/api"
	"platformapi/resources"
)

// loginLifetime bounds how long a sign-in may take at the provider.
const loginLifetime = 10 * time.Minute

// providerTimeout bounds each call to the provider made outside a request.
const providerTimeout = 15 * time.Second

// oidcClient talks to the OpenID provider, discovered on first use (so the
// server starts while the provider is down).
type oidcClient struct {
	cfg      *Config
	mu       sync.Mutex
	provider *oidc.Provider
}

// discover returns the provider, discovering it once it answers.
func (c *oidcClient) discover(ctx context.Context) (*oidc.Provider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.provider == nil {
		// The provider keeps this context to fetch the issuer's keys later:
		// not the request's, but one whose calls are each bounded.
		keep := oidc.ClientContext(context.WithoutCancel(ctx), &http.Client{Timeout: providerTimeout})
		p, err := oidc.NewProvider(keep, c.cfg.Issuer)
		if err != nil {
			return nil, fmt.Errorf("discover the OpenID provider %s: %w", c.cfg.Issuer, err)
		}
		c.provider = p
	}
	return c.provider, nil
}

// oauth is the client's OAuth 2 configuration with the callback under
// base (redirectBase).
func (c *oidcClient) oauth(p *oidc.Provider, base string) *oauth2.Config {
	return &oauth2.Config{ClientID: c.cfg.ClientID, ClientSecret: c.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: base + Path + "callback", Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// redirectBase is where the callback address starts: --portal-url, else
// the request's own scheme and Host only when the request names this
// machine (loopbackRequest: development); ok false otherwise, since a Host
// header is the client's to write.
func (c *oidcClient) redirectBase(r *http.Request) (base string, ok bool) {
	if c.cfg.BaseURL == "" && !loopbackRequest(r) {
		return "", false
	}
	return baseURL(c.cfg, r), true
}

// noPortalURL is the refusal of a sign-in whose callback address would
// come from a Host header that is not this machine's.
const noPortalURL = "Sign-in needs the portal's address: start the server with --portal-url " +
	"(PLATFORMAPI_PORTAL_URL) set to the address browsers use, e.g. https://platform.example.com. " +
	"Without it, sign-in works only on this machine (localhost)."

// baseURL is the installation's address as the browser reaches it:
// --portal-url, else the request's scheme and host (the API is at
// baseURL/api/v1).
func baseURL(cfg *Config, r *http.Request) string {
	if cfg.BaseURL != "" {
		return strings.TrimRight(cfg.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// loginState is what the sign-in cookie carries from /login to /callback.
type loginState struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Expires  time.Time `json:"e"`
}

// login starts a sign-in: state, nonce and PKCE verifier go into a signed,
// short-lived cookie; the browser goes to the provider.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if h.oidc == nil {
		h.refuse(w, r, http.StatusServiceUnavailable,
			"Sign-in is not configured on this server (--oidc-issuer and --oidc-client-id).")
		return
	}
	base, ok := h.oidc.redirectBase(r)
	if !ok {
		h.refuse(w, r, http.StatusServiceUnavailable, noPortalURL)
		return
	}
	p, err := h.oidc.discover(r.Context())
	if err != nil {
		h.fault(w, r, "discovering the OpenID provider", err)
		return
	}
	st := loginState{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier(),
		Expires: h.cfg.Now().Add(loginLifetime)}
	h.setCookie(w, r, loginCookie, h.sign(st), int(loginLifetime/time.Second))
	target := h.oidc.oauth(p, base).AuthCodeURL(st.State, oidc.Nonce(st.Nonce),
		oauth2.S256ChallengeOption(st.Verifier))
	http.Redirect(w, r, target, http.StatusFound)
}

// sign encodes st with its HMAC-SHA256 under the login key.
func (h *Handler) sign(st loginState) string {
	b, _ := json.Marshal(st)
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + base64.RawURLEncoding.EncodeToString(h.mac(payload))
}

func (h *Handler) mac(payload string) []byte {
	m := hmac.New(sha256.New, h.cfg.LoginKey)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// loginOf reads the request's sign-in cookie: signed by us and not expired.
func (h *Handler) loginOf(r *http.Request) (loginState, bool) {
	var st loginState
	c, err := r.Cookie(loginCookie)
	if err != nil {
		return st, false
	}
	payload, sig, ok := strings.Cut(c.Value, ".")
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, h.mac(payload)) {
		return st, false
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(b, &st) != nil || !h.cfg.Now().Before(st.Expires) {
		return loginState{}, false
	}
	return st, true
}

// callback finishes a sign-in: the state matches the cookie's, the code is
// exchanged with the PKCE verifier, the ID token is verified (issuer keys,
// audience, nonce) and its verified e-mail names an active person, who gets
// a new session.
func (h *Handler) callback(w http.ResponseWriter, r *http.Request) {
	if h.oidc == nil {
		h.refuse(w, r, http.StatusServiceUnavailable, "Sign-in is not configured on this server.")
		return
	}
	st, ok := h.loginOf(r)
	h.setCookie(w, r, loginCookie, "", -1) // one use only
	q := r.URL.Query()
	if !ok || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(st.State)) != 1 {
		h.refuse(w, r, http.StatusBadRequest,
			"This sign-in is not the one this browser started, or it took too long. Sign in again.")
		return
	}
	if q.Get("error") != "" || q.Get("code") == "" {
		h.refuse(w, r, http.StatusForbidden, "The identity provider did not sign you in.")
		return
	}
	base, ok := h.oidc.redirectBase(r)
	if !ok {
		h.refuse(w, r, http.StatusServiceUnavailable, noPortalURL)
		return
	}
	email, err := h.verifiedEmail(r, base, st, q.Get("code"))
	if err != nil {
		h.cfg.Logger.Info("portal: sign-in refused", "error", err, "request_id", api.RequestID(r.Context()))
		h.refuse(w, r, http.StatusForbidden,
			"The identity provider's answer could not be verified. Sign in again.")
		return
	}
	h.startSession(w, r, email)
}

// claims are the ID token's members the portal reads.
type claims struct {
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
}

// verifiedEmail exchanges code and verifies the ID token, returning its
// e-mail ("" when the provider does not vouch for it).
func (h *Handler) verifiedEmail(r *http.Request, base string, st loginState, code string) (string, error) {
	p, err := h.oidc.discover(r.Context())
	if err != nil {
		return "", err
	}
	tok, err := h.oidc.oauth(p, base).Exchange(r.Context(), code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		return "", fmt.Errorf("exchange the code: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	v := p.Verifier(&oidc.Config{ClientID: h.cfg.ClientID, Now: h.cfg.Now})
	idt, err := v.Verify(r.Context(), raw)
	if err != nil {
		return "", fmt.Errorf("verify the ID token: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(st.Nonce)) != 1 {
		return "", fmt.Errorf("the ID token's nonce is not this sign-in's")
	}
	var c claims
	if err := idt.Claims(&c); err != nil {
		return "", fmt.Errorf("read the ID token's claims: %w", err)
	}
	if !c.EmailVerified {
		return "", nil
	}
	return c.Email, nil
}

// startSession signs the person with e-mail in under a new session id
// (ending any session the browser held) and goes to the portal's page.
func (h *Handler) startSession(w http.ResponseWriter, r *http.Request, email string) {
	refusal := "You cannot sign in here: your identity provider does not vouch for your e-mail address, " +
		"or no active person of this installation has it. Ask an administrator."
	if email == "" {
		h.refuse(w, r, http.StatusForbidden, refusal)
		return
	}
	var previous resources.SessionID
	if c, err := r.Cookie(sessionCookie); err == nil {
		previous = resources.SessionID(c.Value)
	}
	id := resources.NewSessionID()
	_, err := h.cfg.Sessions.StartSession(r.Context(), actorOf(r), email, id, previous)
	if e, ok := resources.AsError(err); ok && e.Kind == resources.KindForbidden {
		h.refuse(w, r, http.StatusForbidden, refusal)
		return
	}
	if err != nil {
		h.fault(w, r, "starting a session", err)
		return
	}
	h.setCookie(w, r, sessionCookie, string(id), int(resources.SessionAbsoluteLifetime/time.Second))
	http.Redirect(w, r, Path, http.StatusSeeOther)
}
