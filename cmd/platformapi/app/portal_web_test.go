package app

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oauth2-proxy/mockoidc"

	"platformapi/resources"
)

// sessionCookieOf is the session cookie an answer sets.
func sessionCookieOf(t *testing.T, res *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range res.Cookies() {
		if c.Name == "platformapi_session" && c.Value != "" {
			return c
		}
	}
	t.Fatalf("no session cookie set: %v", res.Header.Values("Set-Cookie"))
	return nil
}

// TestPortalSignIn_VerifiedEmailOfActivePerson_SessionCookieAndAudit signs
// in with the provider: a Secure, HttpOnly, SameSite=Lax cookie on
// /portal/, one session row holding only the id's hash, an audit row with
// the person, auth kind session, request id and address, and the page
// showing the person behind a strict Content-Security-Policy — all while
// the API switch is off (the portal lies outside it).
func TestPortalSignIn_VerifiedEmailOfActivePerson_SessionCookieAndAudit(t *testing.T) {
	w := startPortal(t, false, false)
	u := w.person("ada@example.test", "Ada Lovelace")
	if res, _ := w.do(http.MethodGet, w.url+"/api/v1/whoami", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the API switch is not off: GET /api/v1/whoami %d", res.StatusCode)
	}
	res, body := w.signIn(verifiedUser("ada@example.test"), "req-sign-in-1")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/portal/" {
		t.Fatalf("callback: %d %s", res.StatusCode, body)
	}
	c := sessionCookieOf(t, res)
	got := []any{c.Secure, c.HttpOnly, c.SameSite, c.Path}
	if diff := cmp.Diff([]any{true, true, http.SameSiteLaxMode, "/portal/"}, got); diff != "" {
		t.Fatalf("cookie flags (-want +got)\n%s", diff)
	}
	if n := w.count("SELECT count(*) FROM portal_sessions WHERE user_id = ? AND id_hash = ?",
		u.ID, resources.SessionID(c.Value).Hash()); n != 1 {
		t.Fatalf("session rows of the cookie's hash: %d", n)
	}
	var audit struct {
		Actor, Action, AuthKind, RequestID, SourceIP, EntityID string
	}
	err := w.m.db.NewRaw(`SELECT actor, action, auth_kind, request_id, source_ip, entity_id FROM audit_events
		WHERE action LIKE 'session.%'`).Scan(t.Context(), &audit.Actor, &audit.Action, &audit.AuthKind,
		&audit.RequestID, &audit.SourceIP, &audit.EntityID)
	if err != nil {
		t.Fatal(err)
	}
	want := struct{ Actor, Action, AuthKind, RequestID, SourceIP, EntityID string }{"ada@example.test",
		"session.sign_in", "session", "req-sign-in-1", "127.0.0.1", strconv.FormatInt(u.ID, 10)}
	if diff := cmp.Diff(want, audit); diff != "" {
		t.Fatalf("audit row (-want +got)\n%s", diff)
	}
	front, page := w.do(http.MethodGet, w.url+"/portal/", nil)
	if !strings.Contains(page, "Signed in as <strong>Ada Lovelace</strong> (ada@example.test)") {
		t.Fatalf("front page: %s", page)
	}
	if csp := front.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") ||
		!strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("Content-Security-Policy: %q", csp)
	}
}

// TestPortalSignIn_PlainHTTPOnLoopback_CookieNotSecure: on plain HTTP from
// and to loopback (development) the cookie cannot be Secure, or the
// browser would never send it back.
func TestPortalSignIn_PlainHTTPOnLoopback_CookieNotSecure(t *testing.T) {
	w := startPortal(t, true, false)
	w.person("ada@example.test", "Ada Lovelace")
	res, body := w.signIn(verifiedUser("ada@example.test"), "req-1")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("callback: %d %s", res.StatusCode, body)
	}
	if c := sessionCookieOf(t, res); c.Secure || !c.HttpOnly {
		t.Fatalf("cookie on loopback HTTP: %+v", c)
	}
	if !w.signedIn() {
		t.Fatal("not signed in")
	}
}

// TestPortalSignIn_Refused_NothingCreated: every sign-in that must not
// succeed answers a plain refusal page, creates no session, no person and
// no sign-in audit row.
func TestPortalSignIn_Refused_NothingCreated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		run    func(w *portalWorld) (*http.Response, string)
	}{
		{"unverified e-mail", http.StatusForbidden, func(w *portalWorld) (*http.Response, string) {
			return w.signIn(&mockoidc.MockUser{Subject: "s", Email: "ada@example.test"}, "r")
		}},
		{"unknown e-mail", http.StatusForbidden, func(w *portalWorld) (*http.Response, string) {
			return w.signIn(verifiedUser("nobody@example.test"), "r")
		}},
		{"deactivated person", http.StatusForbidden, func(w *portalWorld) (*http.Response, string) {
			w.deactivate("ada@example.test")
			return w.signIn(verifiedUser("ada@example.test"), "r")
		}},
		{"ID token for another client", http.StatusForbidden, func(w *portalWorld) (*http.Response, string) {
			return w.signIn(otherAudienceUser{verifiedUser("ada@example.test")}, "r")
		}},
		{"ID token with another sign-in's nonce", http.StatusForbidden, func(w *portalWorld) (*http.Response,
			string) {
			return w.signIn(otherNonceUser{verifiedUser("ada@example.test")}, "r")
		}},
		{"sign-in cookie tampered with", http.StatusBadRequest, func(w *portalWorld) (*http.Response, string) {
			cb := w.authorize(verifiedUser("ada@example.test"))
			w.tamperLoginCookie(cb)
			return w.do(http.MethodGet, cb.String(), nil)
		}},
		{"sign-in took over 10 minutes", http.StatusBadRequest, func(w *portalWorld) (*http.Response, string) {
			cb := w.authorize(verifiedUser("ada@example.test"))
			w.setClock(10*time.Minute + time.Second)
			return w.do(http.MethodGet, cb.String(), nil)
		}},
		{"wrong state", http.StatusBadRequest, func(w *portalWorld) (*http.Response, string) {
			cb := w.authorize(verifiedUser("ada@example.test"))
			q := cb.Query()
			q.Set("state", "forged-state")
			cb.RawQuery = q.Encode()
			return w.do(http.MethodGet, cb.String(), nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := startPortal(t, false, false)
			w.person("ada@example.test", "Ada Lovelace")
			w.person("admin@example.test", "Admin")
			res, body := tc.run(w)
			if res.StatusCode != tc.status || !strings.Contains(body, "<p>") {
				t.Fatalf("callback: %d %s", res.StatusCode, body)
			}
			got := []int{w.count("SELECT count(*) FROM portal_sessions"), w.count("SELECT count(*) FROM users"),
				w.count("SELECT count(*) FROM audit_events WHERE action = 'session.sign_in'")}
			if diff := cmp.Diff([]int{0, 2, 0}, got); diff != "" {
				t.Fatalf("sessions, people, sign-in rows (-want +got)\n%s", diff)
			}
			if w.signedIn() {
				t.Fatal("signed in after a refusal")
			}
		})
	}
}

// TestPortalSignIn_ReplayedCode_Refused: a code that signed a person in
// once, brought back with a fresh sign-in's state, is refused by the
// provider and signs nobody in again.
func TestPortalSignIn_ReplayedCode_Refused(t *testing.T) {
	w := startPortal(t, false, false)
	w.person("ada@example.test", "Ada Lovelace")
	first := w.authorize(verifiedUser("ada@example.test"))
	if res, body := w.do(http.MethodGet, first.String(), nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("first sign-in: %d %s", res.StatusCode, body)
	}
	again := w.authorize(verifiedUser("ada@example.test"))
	q := again.Query()
	q.Set("code", first.Query().Get("code"))
	again.RawQuery = q.Encode()
	res, body := w.do(http.MethodGet, again.String(), nil)
	got := []int{res.StatusCode, w.count("SELECT count(*) FROM portal_sessions"),
		w.count("SELECT count(*) FROM audit_events WHERE action = 'session.sign_in'")}
	if diff := cmp.Diff([]int{http.StatusForbidden, 1, 1}, got); diff != "" {
		t.Fatalf("replay: status, sessions, sign-in rows (-want +got)\n%s\n%s", diff, body)
	}
}

// deactivate deactivates the person with e-mail through the store (which
// ends their sessions in the same transaction).
func (w *portalWorld) deactivate(email string) {
	w.t.Helper()
	var id int64
	if err := w.m.db.NewRaw("SELECT id FROM users WHERE email = ?", email).Scan(w.t.Context(), &id); err != nil {
		w.t.Fatal(err)
	}
	if err := w.m.store.DeactivateUser(w.t.Context(), resources.Actor{Label: "ops:test"}, id); err != nil {
		w.t.Fatal(err)
	}
}

// TestPortalSession_PersonDeactivated_EndsAtOnce: a deactivation deletes
// the person's sessions with it; a person deactivated without that (as by
// another replica's write the session store never saw) is refused on the
// next request all the same.
func TestPortalSession_PersonDeactivated_EndsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name       string
		deactivate func(w *portalWorld)
		rowsAfter  int // sessions right after the deactivation
	}{
		{"through the store", func(w *portalWorld) { w.deactivate("ada@example.test") }, 0},
		{"status changed elsewhere", func(w *portalWorld) {
			if _, err := w.m.db.ExecContext(w.t.Context(),
				"UPDATE users SET status = 'deactivated' WHERE email = 'ada@example.test'"); err != nil {
				w.t.Fatal(err)
			}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := startPortal(t, false, false)
			w.person("ada@example.test", "Ada Lovelace")
			if res, body := w.signIn(verifiedUser("ada@example.test"), "r"); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("callback: %d %s", res.StatusCode, body)
			}
			tc.deactivate(w)
			if n := w.count("SELECT count(*) FROM portal_sessions"); n != tc.rowsAfter {
				t.Fatalf("sessions after the deactivation: %d", n)
			}
			if w.signedIn() {
				t.Fatal("a deactivated person is still signed in")
			}
			if n := w.count("SELECT count(*) FROM portal_sessions"); n != 0 {
				t.Fatalf("sessions after the next request: %d", n)
			}
		})
	}
}

// TestPortalSignOut_EndsSessionOnlyFromTheSameSite: a cross-site POST to
// /portal/logout is refused and changes nothing; the portal's own sign-out
// deletes the session and writes the sign-out audit row; the metrics count
// each portal route under its own name.
func TestPortalSignOut_EndsSessionOnlyFromTheSameSite(t *testing.T) {
	w := startPortal(t, false, false)
	w.person("ada@example.test", "Ada Lovelace")
	w.signIn(verifiedUser("ada@example.test"), "r")
	res, _ := w.do(http.MethodPost, w.url+"/portal/logout", http.Header{"Sec-Fetch-Site": {"cross-site"}})
	if res.StatusCode != http.StatusForbidden || !w.signedIn() {
		t.Fatalf("cross-site sign-out: %d, still signed in: %v", res.StatusCode, w.signedIn())
	}
	res, _ = w.do(http.MethodPost, w.url+"/portal/logout",
		http.Header{"Sec-Fetch-Site": {"same-origin"}, "X-Request-Id": {"req-out"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", res.StatusCode)
	}
	got := []int{w.count("SELECT count(*) FROM portal_sessions"), w.count(`SELECT count(*) FROM audit_events
		WHERE action = 'session.sign_out' AND actor = 'ada@example.test' AND auth_kind = 'session'
		AND request_id = 'req-out' AND source_ip = '127.0.0.1'`)}
	if diff := cmp.Diff([]int{0, 1}, got); diff != "" || w.signedIn() {
		t.Fatalf("sessions, sign-out rows (-want +got)\n%s", diff)
	}
	_, metrics := w.do(http.MethodGet, w.url+"/metrics", nil)
	for _, op := range []string{`"portal-login",status="302"`, `"portal-callback",status="303"`,
		`"portal-index",status="200"`, `"portal",status="403"`, `"portal-logout",status="303"`} {
		if !strings.Contains(metrics, `platformapi_http_requests_total{operation=`+op+`}`) {
			t.Errorf("no portal request counted as %s", op)
		}
	}
}

// TestPortalSession_Lifetimes: a session in use lives on past the idle
// lifetime counted from its start, ends after the idle lifetime unused,
// and ends at the absolute lifetime however often it is used.
func TestPortalSession_Lifetimes(t *testing.T) {
	step := resources.SessionIdleLifetime - time.Hour
	t.Run("idle", func(t *testing.T) {
		w := startPortal(t, false, false)
		w.person("ada@example.test", "Ada Lovelace")
		w.signIn(verifiedUser("ada@example.test"), "r")
		for _, at := range []time.Duration{step, 2 * step} { // each use less than the idle lifetime after the last
			w.setClock(at)
			if !w.signedIn() {
				t.Fatalf("ended at %v, before the idle lifetime", at)
			}
		}
		w.setClock(2*step + resources.SessionIdleLifetime)
		if w.signedIn() || w.count("SELECT count(*) FROM portal_sessions") != 0 {
			t.Fatal("still on after the idle lifetime unused")
		}
	})
	t.Run("absolute", func(t *testing.T) {
		w := startPortal(t, false, false)
		w.person("ada@example.test", "Ada Lovelace")
		w.signIn(verifiedUser("ada@example.test"), "r")
		var at time.Duration
		for at+step < resources.SessionAbsoluteLifetime {
			at += step
			w.setClock(at)
			if !w.signedIn() {
				t.Fatalf("ended at %v, in use", at)
			}
		}
		w.setClock(resources.SessionAbsoluteLifetime)
		if w.signedIn() {
			t.Fatal("still on at the absolute lifetime")
		}
	})
}

// TestPortalSession_SweepDeletesOnlyEndedSessions: the background sweep
// removes sessions past the idle lifetime that are never presented again,
// and leaves live ones.
func TestPortalSession_SweepDeletesOnlyEndedSessions(t *testing.T) {
	w := startPortal(t, false, false)
	w.person("ada@example.test", "Ada Lovelace")
	w.signIn(verifiedUser("ada@example.test"), "r")
	var got []int64
	for _, at := range []time.Duration{time.Hour, resources.SessionIdleLifetime + time.Second} {
		w.setClock(at)
		n, err := w.m.store.DeleteEndedSessions(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if diff := cmp.Diff([]int64{0, 1}, got); diff != "" {
		t.Fatalf("deleted at 1 h, past the idle lifetime (-want +got)\n%s", diff)
	}
}

// TestOIDCClientSecret_EnvWinsOverFile: the client secret comes from
// PLATFORMAPI_OIDC_CLIENT_SECRET, else from --oidc-client-secret-file
// (trimmed), else there is none; an unreadable file is an error naming the
// flag.
func TestOIDCClientSecret_EnvWinsOverFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, env, file, want, err string }{
		{"env wins", "from-env", file, "from-env", ""},
		{"file", "", file, "from-file", ""},
		{"none", "", "", "", ""},
		{"unreadable file", "", file + ".missing", "", "--oidc-client-secret-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PLATFORMAPI_OIDC_CLIENT_SECRET", tc.env)
			got, err := oidcClientSecret(tc.file)
			if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("got %q, %v; want %q, %q", got, err, tc.want, tc.err)
			}
		})
	}
}

// TestPortalSignIn_NotConfigured_SaysSo: without an issuer the sign-in page
// says sign-in is not configured.
func TestPortalSignIn_NotConfigured_SaysSo(t *testing.T) {
	w := startPortal(t, false, true)
	res, body := w.do(http.MethodGet, w.url+"/portal/login", nil)
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "Sign-in is not configured") {
		t.Fatalf("GET /portal/login: %d %s", res.StatusCode, body)
	}
	if !strings.Contains(w.page(), "Sign-in is not configured") {
		t.Fatal("front page does not say sign-in is not configured")
	}
}

// TestPortalSignIn_NewSessionIDEveryTime: an id the browser held before
// (one an attacker planted, or the person's previous session) is never
// taken over: a sign-in sets a new id and ends the previous session.
func TestPortalSignIn_NewSessionIDEveryTime(t *testing.T) {
	w := startPortal(t, false, false)
	w.person("ada@example.test", "Ada Lovelace")
	base, _ := url.Parse(w.url + "/portal/")
	planted := string(resources.NewSessionID())
	w.client.Jar.SetCookies(base, []*http.Cookie{{Name: "platformapi_session", Value: planted, Path: "/portal/"}})
	if w.signedIn() {
		t.Fatal("a planted id signs in")
	}
	w.client.Jar.SetCookies(base, []*http.Cookie{{Name: "platformapi_session", Value: planted, Path: "/portal/"}})
	res, _ := w.signIn(verifiedUser("ada@example.test"), "r")
	first := sessionCookieOf(t, res).Value
	res, _ = w.signIn(verifiedUser("ada@example.test"), "r")
	second := sessionCookieOf(t, res).Value
	got := []any{first == planted, second == first, w.count("SELECT count(*) FROM portal_sessions"),
		w.count("SELECT count(*) FROM portal_sessions WHERE id_hash = ?", resources.SessionID(second).Hash())}
	if diff := cmp.Diff([]any{false, false, 1, 1}, got); diff != "" {
		t.Fatalf("planted kept, id kept, sessions, sessions of the new id (-want +got)\n%s", diff)
	}
}

// tamperLoginCookie changes one character of the sign-in cookie the browser
// sends to the callback cb (its signature no longer matches).
func (w *portalWorld) tamperLoginCookie(cb *url.URL) {
	w.t.Helper()
	for _, c := range w.client.Jar.Cookies(cb) {
		if c.Name != "platformapi_login" {
			continue
		}
		v := []byte(c.Value)
		v[len(v)/2] ^= 1
		w.client.Jar.SetCookies(cb, []*http.Cookie{{Name: c.Name, Value: string(v), Path: "/portal/"}})
		return
	}
	w.t.Fatal("no sign-in cookie to tamper with")
}
