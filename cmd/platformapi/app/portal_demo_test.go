package app

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// demoSignIn posts the demo sign-in form for email with the headers a
// browser sends for a form of the portal's own page (plus header).
func (w *portalWorld) demoSignIn(email string, header http.Header) (*http.Response, string) {
	w.t.Helper()
	h := http.Header{"Sec-Fetch-Site": {"same-origin"}}
	for k, v := range header {
		h[k] = v
	}
	return w.postForm("/portal/demo-login", url.Values{"email": {email}}, h)
}

// TestPortalDemoSignIn_OutsideDemoMode_NotFound: without --demo the demo
// sign-in does not exist (404 for both methods) and the front page does not
// link it.
func TestPortalDemoSignIn_OutsideDemoMode_NotFound(t *testing.T) {
	w := startPortal(t, true, false)
	w.person("ada@example.test", "Ada Lovelace")
	res, body := w.do(http.MethodGet, w.url+"/portal/demo-login", nil)
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /portal/demo-login outside demo mode: %d %s", res.StatusCode, body)
	}
	if res, body := w.demoSignIn("ada@example.test", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("POST /portal/demo-login outside demo mode: %d %s", res.StatusCode, body)
	}
	if n := w.count("SELECT count(*) FROM portal_sessions"); n != 0 {
		t.Fatalf("sessions after a demo sign-in outside demo mode: %d", n)
	}
	if page := w.page(); strings.Contains(page, "demo-login") {
		t.Fatalf("the front page links the demo sign-in outside demo mode: %s", page)
	}
}

// TestPortalDemoSignIn_ListsActivePeopleOnly: the demo sign-in page lists
// each active person (e-mail, name, roles) with a button, and not the
// deactivated; the front page links it.
func TestPortalDemoSignIn_ListsActivePeopleOnly(t *testing.T) {
	w := startPortalWith(t, portalSetup{plain: true, demo: true})
	admin, err := w.m.Portal().CreateUser(t.Context(), resources.Actor{}, resources.NewUser{Email: "root@example.test",
		DisplayName: "Root Admin", Roles: []string{"admin"}})
	if err != nil {
		t.Fatal(err)
	}
	w.person("ada@example.test", "Ada Lovelace")
	w.person("gone@example.test", "Gone Person")
	w.deactivate("gone@example.test")
	if page := w.page(); !strings.Contains(page, `<a href="/portal/demo-login">Demo sign-in</a>`) {
		t.Fatalf("the front page does not link the demo sign-in: %s", page)
	}
	res, page := w.do(http.MethodGet, w.url+"/portal/demo-login", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /portal/demo-login: %d %s", res.StatusCode, page)
	}
	for _, want := range []string{"<td>Root Admin</td><td>root@example.test</td>\n<td>" +
		strings.Join(admin.Roles, ", ") + "</td>", `value="ada@example.test"`, "Sign in as Ada Lovelace"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the demo sign-in page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "gone@example.test") {
		t.Fatalf("the demo sign-in page lists a deactivated person:\n%s", page)
	}
}

// TestPortalDemoSignIn_StartsSessionLikeTheProvider: a demo sign-in starts
// a session the way the provider's does — a new session id in the same
// cookie, the browser's previous session ended, an audit row
// session.sign_in with the request id — and a deactivated or unknown
// person is refused with nothing created.
func TestPortalDemoSignIn_StartsSessionLikeTheProvider(t *testing.T) {
	w := startPortalWith(t, portalSetup{plain: true, demo: true})
	ada := w.person("ada@example.test", "Ada Lovelace")
	w.person("bob@example.test", "Bob Stone")
	w.person("gone@example.test", "Gone Person")
	w.deactivate("gone@example.test")
	res, body := w.demoSignIn("ada@example.test", http.Header{"X-Request-Id": {"req-demo-1"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/portal/" {
		t.Fatalf("demo sign-in: %d %s", res.StatusCode, body)
	}
	first := sessionCookieOf(t, res)
	if got := []any{first.HttpOnly, first.SameSite, first.Path}; !cmp.Equal(got,
		[]any{true, http.SameSiteLaxMode, "/portal/"}) {
		t.Fatalf("cookie flags: %v", got)
	}
	if !strings.Contains(w.page(), "Signed in as <strong>Ada Lovelace</strong>") {
		t.Fatal("not signed in as Ada after the demo sign-in")
	}
	var actor, requestID, entity string
	if err := w.m.db.NewRaw(`SELECT actor, request_id, entity_id FROM audit_events
		WHERE action = 'session.sign_in'`).Scan(t.Context(), &actor, &requestID, &entity); err != nil {
		t.Fatal(err)
	}
	want := []string{"ada@example.test", "req-demo-1", strconv.FormatInt(ada.ID, 10)}
	if diff := cmp.Diff(want, []string{actor, requestID, entity}); diff != "" {
		t.Fatalf("audit row (-want +got)\n%s", diff)
	}
	res, _ = w.demoSignIn("bob@example.test", nil)
	if second := sessionCookieOf(t, res); second.Value == first.Value {
		t.Fatal("a second demo sign-in kept the session id")
	}
	if n := w.count("SELECT count(*) FROM portal_sessions"); n != 1 {
		t.Fatalf("sessions after switching person: %d, want 1 (the previous one ended)", n)
	}
	for _, email := range []string{"gone@example.test", "nobody@example.test", ""} {
		if res, body := w.demoSignIn(email, nil); res.StatusCode != http.StatusForbidden {
			t.Fatalf("demo sign-in as %q: %d %s", email, res.StatusCode, body)
		}
	}
	if n := w.count("SELECT count(*) FROM audit_events WHERE action = 'session.sign_in'"); n != 2 {
		t.Fatalf("sign-in audit rows: %d, want 2", n)
	}
}

// TestPortalDemoSignIn_CrossSitePost_Refused: the demo sign-in's form is
// under the portal's cross-origin protection: a post from another origin
// is refused with the refusal page, no session started.
func TestPortalDemoSignIn_CrossSitePost_Refused(t *testing.T) {
	w := startPortalWith(t, portalSetup{plain: true, demo: true})
	w.person("ada@example.test", "Ada Lovelace")
	for _, site := range []string{"cross-site", "same-site"} {
		res, body := w.demoSignIn("ada@example.test", http.Header{"Sec-Fetch-Site": {site}})
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "came from another site") {
			t.Fatalf("a %s demo sign-in: %d %s", site, res.StatusCode, body)
		}
	}
	if n := w.count("SELECT count(*) FROM portal_sessions"); n != 0 {
		t.Fatalf("sessions after cross-site demo sign-ins: %d", n)
	}
}
