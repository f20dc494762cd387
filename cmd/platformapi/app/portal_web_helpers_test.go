package app

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/prometheus/client_golang/prometheus"

	"platformapi/bunstore/pgtest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// portalWorld is the server with the people's portal, signing in with a
// real OpenID provider (mockoidc, over HTTP), its clock frozen and movable.
type portalWorld struct {
	t      *testing.T
	m      *Main
	idp    *mockoidc.MockOIDC
	url    string // the server's base URL (HTTPS unless asked otherwise)
	client *http.Client
	start  time.Time             // the clock's instant at the start
	logs   *testkit.LockedBuffer // the server's log (JSON lines, debug and up)
}

// startPortal serves the portal over HTTPS (plain HTTP when plain) with
// sign-in at a fresh OpenID provider (none when noIssuer).
func startPortal(t *testing.T, plain, noIssuer bool) *portalWorld {
	t.Helper()
	return startPortalWith(t, portalSetup{plain: plain, noIssuer: noIssuer})
}

// startPortalDemo serves the portal of the demo world (serve --demo: its
// people, the prod promotion awaiting approval) with the background worker
// and the simulated pipeline running.
func startPortalDemo(t *testing.T) *portalWorld {
	t.Helper()
	return startPortalWith(t, portalSetup{demo: true, demoWorld: true})
}

// portalSetup says how startPortalWith serves the portal.
type portalSetup struct {
	plain     bool   // plain HTTP, else HTTPS
	noIssuer  bool   // no OpenID provider configured
	demo      bool   // demo mode (`serve --demo`): the demo sign-in
	demoWorld bool   // and the demo world built (its people), the worker running, as serve --demo does
	portalURL string // --portal-url (empty: none)
}

// startPortalWith serves the portal as s says, with the clock frozen.
func startPortalWith(t *testing.T, s portalSetup) *portalWorld {
	t.Helper()
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", "portal-test-pepper-0123456789")
	start := time.Now().UTC().Truncate(time.Second)
	logs := &testkit.LockedBuffer{}
	m, err := Open(t.Context(), Options{DatabaseURL: pgtest.DSN(t), FrozenClock: start,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	po := PortalOptions{OIDCIssuer: idp.Issuer(), OIDCClientID: idp.ClientID, OIDCClientSecret: idp.ClientSecret}
	if s.noIssuer {
		po = PortalOptions{}
	}
	po.URL = s.portalURL
	reg := m.newRegistry()
	h, err := m.prepare(t.Context(), ServeOptions{Portal: po, Demo: s.demo}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if s.demoWorld {
		startDemoWorld(t, m, h, reg)
	}
	srv := httptest.NewUnstartedServer(h)
	if s.plain {
		srv.Start()
	} else {
		srv.StartTLS()
	}
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	client := &http.Client{Jar: jar, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &portalWorld{t: t, m: m, idp: idp, url: srv.URL, client: client, start: start, logs: logs}
}

// startDemoWorld builds the demo world behind h and runs the worker with
// the simulated pipeline until the test ends.
func startDemoWorld(t *testing.T, m *Main, h http.Handler, reg prometheus.Registerer) {
	t.Helper()
	if _, err := m.buildDemo(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	wk, err := m.startWorker(t.Context(), ServeOptions{PollInterval: 20 * time.Millisecond}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wk.StopAndCancel(context.Background()) })
}

// do sends one request from the browser (cookies kept, no redirect
// followed) and returns the answer with its body read.
func (w *portalWorld) do(method, target string, header http.Header) (*http.Response, string) {
	w.t.Helper()
	return w.send(method, target, header, nil)
}

// send is do with a request body.
func (w *portalWorld) send(method, target string, header http.Header, body io.Reader) (*http.Response, string) {
	w.t.Helper()
	req, err := http.NewRequestWithContext(w.t.Context(), method, target, body)
	if err != nil {
		w.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := w.client.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// postForm posts form to the portal's path with header and the form's
// content type.
func (w *portalWorld) postForm(path string, form url.Values, header http.Header) (*http.Response, string) {
	w.t.Helper()
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	for k, v := range header {
		h[k] = v
	}
	return w.send(http.MethodPost, w.url+path, h, strings.NewReader(form.Encode()))
}

// authorize starts a sign-in as user and returns the callback URL the
// provider sends the browser back to.
func (w *portalWorld) authorize(user mockoidc.User) *url.URL {
	w.t.Helper()
	w.idp.QueueUser(user)
	res, _ := w.do(http.MethodGet, w.url+"/portal/login", nil)
	if res.StatusCode != http.StatusFound {
		w.t.Fatalf("GET /portal/login: %d", res.StatusCode)
	}
	loc, _ := res.Location()
	q := loc.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("nonce") == "" || q.Get("state") == "" {
		w.t.Fatalf("authorization request without PKCE S256, nonce or state: %s", loc)
	}
	res, _ = w.do(http.MethodGet, loc.String(), nil)
	cb, err := res.Location()
	if err != nil {
		w.t.Fatalf("the provider did not send the browser back: %d %v", res.StatusCode, err)
	}
	return cb
}

// signIn signs user in and returns the callback's answer.
func (w *portalWorld) signIn(user mockoidc.User, requestID string) (*http.Response, string) {
	w.t.Helper()
	return w.do(http.MethodGet, w.authorize(user).String(), http.Header{"X-Request-Id": {requestID}})
}

// page is the portal's front page's body.
func (w *portalWorld) page() string {
	w.t.Helper()
	res, body := w.do(http.MethodGet, w.url+"/portal/", nil)
	if res.StatusCode != http.StatusOK {
		w.t.Fatalf("GET /portal/: %d %s", res.StatusCode, body)
	}
	return body
}

// signedIn reports whether the front page shows someone signed in.
func (w *portalWorld) signedIn() bool { return strings.Contains(w.page(), "Signed in as") }

// person creates an active person.
func (w *portalWorld) person(email, name string) resources.User {
	w.t.Helper()
	u, err := w.m.store.CreateUser(w.t.Context(), resources.Actor{}, resources.NewUser{Email: email, DisplayName: name})
	if err != nil {
		w.t.Fatal(err)
	}
	return u
}

// count runs a count query.
func (w *portalWorld) count(query string, args ...any) int {
	w.t.Helper()
	var n int
	if err := w.m.db.NewRaw(query, args...).Scan(w.t.Context(), &n); err != nil {
		w.t.Fatal(err)
	}
	return n
}

// setClock moves the server's (and the database's) clock to start+d.
func (w *portalWorld) setClock(d time.Duration) {
	w.t.Helper()
	if err := w.m.clock.Load().Set(w.t.Context(), w.start.Add(d)); err != nil {
		w.t.Fatal(err)
	}
}

// verifiedUser is a person the provider vouches for.
func verifiedUser(email string) *mockoidc.MockUser {
	return &mockoidc.MockUser{Subject: "sub-" + email, Email: email, EmailVerified: true}
}

// otherAudienceUser is a person whose ID token is issued for another
// client.
type otherAudienceUser struct{ *mockoidc.MockUser }

// Claims are the person's claims with the audience of another client.
func (u otherAudienceUser) Claims(scope []string, c *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	c.Audience = jwt.ClaimStrings{"another-client"}
	return u.MockUser.Claims(scope, c)
}

// otherNonceUser is a person whose ID token carries another sign-in's
// nonce (a replayed or injected ID token).
type otherNonceUser struct{ *mockoidc.MockUser }

// Claims are the person's claims with a nonce this sign-in never sent.
func (u otherNonceUser) Claims(scope []string, c *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	c.Nonce = "another-sign-ins-nonce"
	return u.MockUser.Claims(scope, c)
}
