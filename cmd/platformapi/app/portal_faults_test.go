package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The portal when its store fails: a fault is not a signed-out person, and
// its page names the request id the cause was logged under.

// breakSessions makes every session read fail (the table is away) until
// the returned function puts it back: a store fault, not an ended session.
func (w *portalWorld) breakSessions() (restore func()) {
	w.t.Helper()
	exec := func(q string) {
		if _, err := w.m.db.ExecContext(w.t.Context(), q); err != nil {
			w.t.Fatal(err)
		}
	}
	exec("ALTER TABLE portal_sessions RENAME TO portal_sessions_away")
	return func() { exec("ALTER TABLE portal_sessions_away RENAME TO portal_sessions") }
}

// TestPortalSession_StoreFault_FaultPageCookieKept: a session that cannot be
// read (the store fails) has not ended: the page answers the fault (503),
// neither a signed-out page nor "your session has ended", and the cookie
// stays, so the person is still signed in once the store is back.
func TestPortalSession_StoreFault_FaultPageCookieKept(t *testing.T) {
	w := startPortal(t, false, false)
	w.person("ada@example.test", "Ada Lovelace")
	w.signedInAs("ada@example.test")
	restore := w.breakSessions()
	front, _ := w.do(http.MethodGet, w.url+"/portal/", nil)
	post, body := w.post("/portal/tokens/1/revoke", url.Values{}, "req-fault")
	restore()
	got := []any{front.StatusCode, front.Header.Values("Set-Cookie"), post.StatusCode,
		post.Header.Values("Set-Cookie"), strings.Contains(body, "session has ended")}
	want := []any{http.StatusServiceUnavailable, []string(nil), http.StatusServiceUnavailable,
		[]string(nil), false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("front page status, its cookies, post status, its cookies, says ended (-want +got)\n%s",
			diff)
	}
	if !w.signedIn() {
		t.Fatal("a store fault signed the person out")
	}
}

// TestPortalFaultPage_ShowsRequestIDNeverTheCause: a fault's page names the
// request id the server logged the cause under (so a person can report it)
// and never the cause itself; a refused sign-in's page names it too.
func TestPortalFaultPage_ShowsRequestIDNeverTheCause(t *testing.T) {
	w := startPortal(t, false, false)
	w.person("ada@example.test", "Ada Lovelace")
	w.signedInAs("ada@example.test")
	restore := w.breakSessions()
	res, body := w.do(http.MethodGet, w.url+"/portal/",
		http.Header{"X-Request-Id": {"req-fault-page"}})
	restore()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "req-fault-page") ||
		strings.Contains(body, "portal_sessions") || strings.Contains(body, "does not exist") {
		t.Fatalf("fault page: %d\n%s", res.StatusCode, body)
	}
	if !strings.Contains(w.logs.String(), "req-fault-page") {
		t.Fatal("the fault is not logged under the request id the page shows")
	}
	cb := w.authorize(verifiedUser("ada@example.test"))
	q := cb.Query()
	q.Set("state", "forged-state")
	cb.RawQuery = q.Encode()
	res, body = w.do(http.MethodGet, cb.String(), http.Header{"X-Request-Id": {"req-refused"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "req-refused") {
		t.Fatalf("refused sign-in: %d\n%s", res.StatusCode, body)
	}
}
