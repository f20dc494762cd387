package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The portal in a real browser (headless chromium, browser_helpers_test.go):
// a real server on a real database, plain HTTP on loopback (the cookie is
// then not Secure, as in development), each page kept as a screenshot.

// startBrowsingPortal serves the portal as s says (over plain HTTP) and
// starts a browser for it.
func startBrowsingPortal(t *testing.T, s portalSetup) (*portalWorld, context.Context) {
	t.Helper()
	ctx := newBrowser(t) // first: skips without chromium before a server is built
	s.plain = true
	return startPortalWith(t, s), ctx
}

// signInWithProvider signs the browser in as email through the OpenID
// provider from the front page's Sign in link.
func (w *portalWorld) signInWithProvider(ctx context.Context, email string) {
	w.t.Helper()
	t := w.t
	w.idp.QueueUser(verifiedUser(email))
	if status := visit(t, ctx, w.url+"/portal/"); status != http.StatusOK {
		t.Fatalf("the front page: %d", status)
	}
	screenshot(t, ctx, "front-page-before-sign-in")
	if status := click(t, ctx, `a[href="/portal/login"]`); status != http.StatusOK {
		t.Fatalf("signing in: %d, %s", status, textOf(t, ctx, "body"))
	}
}

// TestPortalBrowser_SignInWithProvider_ShowsPerson: in the browser the Sign
// in link goes through the OpenID provider (code, PKCE, state and nonce
// cookies) and back to the front page, which names the person.
func TestPortalBrowser_SignInWithProvider_ShowsPerson(t *testing.T) {
	w, ctx := startBrowsingPortal(t, portalSetup{})
	w.person("ada@example.test", "Ada Lovelace")
	w.signInWithProvider(ctx, "ada@example.test")
	if got, want := location(t, ctx), w.url+"/portal/"; got != want {
		t.Fatalf("after the sign-in the browser is at %s, want %s", got, want)
	}
	if got := textOf(t, ctx, "body"); !strings.Contains(got, "Signed in as Ada Lovelace (ada@example.test)") {
		t.Fatalf("the front page after the sign-in:\n%s", got)
	}
	screenshot(t, ctx, "front-page-signed-in")
}

// TestPortalBrowser_DemoSignIn_PickAPerson: in demo mode the front page
// links the demo sign-in, which lists the demo world's people; a button
// signs in as that person, another form post switches to another.
func TestPortalBrowser_DemoSignIn_PickAPerson(t *testing.T) {
	w, ctx := startBrowsingPortal(t, portalSetup{demo: true, demoWorld: true})
	visit(t, ctx, w.url+"/portal/")
	if status := click(t, ctx, `a[href="/portal/demo-login"]`); status != http.StatusOK {
		t.Fatalf("the demo sign-in page: %d", status)
	}
	people := textOf(t, ctx, "table")
	for _, email := range []string{demoAdmin, demoMara, demoJonas, demoLi} {
		if !strings.Contains(people, email) {
			t.Fatalf("the demo sign-in page does not list %s:\n%s", email, people)
		}
	}
	screenshot(t, ctx, "demo-sign-in")
	signInAsDemo(t, ctx, w.url, demoMara)
	if got := textOf(t, ctx, "body"); !strings.Contains(got, "Signed in as Mara Keller") {
		t.Fatalf("the front page after the demo sign-in:\n%s", got)
	}
	screenshot(t, ctx, "front-page-signed-in")
	visit(t, ctx, w.url+"/portal/demo-login") // another person: the form posts the e-mail given
	if status := submitForm(t, ctx, `form[action="/portal/demo-login"]`,
		map[string]string{"email": demoJonas}); status != http.StatusOK {
		t.Fatalf("demo sign-in as %s: %d", demoJonas, status)
	}
	if got := textOf(t, ctx, "body"); !strings.Contains(got, "Signed in as Jonas Berg") {
		t.Fatalf("the front page after switching to Jonas:\n%s", got)
	}
}

// TestPortalBrowser_SignOut_SessionGone: Sign out ends the session (its
// row deleted) and the front page offers Sign in again.
func TestPortalBrowser_SignOut_SessionGone(t *testing.T) {
	w, ctx := startBrowsingPortal(t, portalSetup{})
	w.person("ada@example.test", "Ada Lovelace")
	w.signInWithProvider(ctx, "ada@example.test")
	if n := w.count("SELECT count(*) FROM portal_sessions"); n != 1 {
		t.Fatalf("sessions after the sign-in: %d", n)
	}
	if status := submitForm(t, ctx, `form[action="/portal/logout"]`, nil); status != http.StatusOK {
		t.Fatalf("signing out: %d", status)
	}
	got := textOf(t, ctx, "body")
	if strings.Contains(got, "Signed in as") || !strings.Contains(got, "Sign in") {
		t.Fatalf("the front page after signing out:\n%s", got)
	}
	if n := w.count("SELECT count(*) FROM portal_sessions"); n != 0 {
		t.Fatalf("sessions after signing out: %d", n)
	}
	screenshot(t, ctx, "front-page-after-sign-out")
}

// TestPortalBrowser_CrossSiteFormPost_Refused: a page of another origin
// whose form posts to /portal/logout gets the 403 refusal page and the
// session lives on — both from another port of the same host (same site:
// the SameSite=Lax cookie goes along, only the origin check stops it) and
// from another site (localhost).
func TestPortalBrowser_CrossSiteFormPost_Refused(t *testing.T) {
	w, ctx := startBrowsingPortal(t, portalSetup{})
	w.person("ada@example.test", "Ada Lovelace")
	w.signInWithProvider(ctx, "ada@example.test")
	evil := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><html><body><h1>Another site</h1>
<form method="post" action="%s/portal/logout"><button type="submit">Claim your prize</button></form>
</body></html>`, w.url)
	}))
	t.Cleanup(evil.Close)
	for _, tc := range []struct{ name, origin string }{
		{"same-site", evil.URL},
		{"cross-site", strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			visit(t, ctx, tc.origin+"/")
			screenshot(t, ctx, "other-origin-page")
			if status := click(t, ctx, "form button"); status != http.StatusForbidden {
				t.Fatalf("the cross-origin post answered %d, want 403: %s", status, textOf(t, ctx, "body"))
			}
			if got := textOf(t, ctx, "body"); !strings.Contains(got, "came from another site and was refused") {
				t.Fatalf("the refusal page:\n%s", got)
			}
			screenshot(t, ctx, "refused")
			visit(t, ctx, w.url+"/portal/")
			if got := textOf(t, ctx, "body"); !strings.Contains(got, "Signed in as Ada Lovelace") {
				t.Fatalf("the session did not survive the refused post:\n%s", got)
			}
		})
	}
	if n := w.count("SELECT count(*) FROM audit_events WHERE action = 'session.sign_out'"); n != 0 {
		t.Fatalf("sign-outs audited after the refused posts: %d", n)
	}
}
