package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPortal_UnknownPathOrWrongMethod_PortalPageNotPlainText: an address
// the portal does not serve answers the portal's own page (HTML, the
// security headers, the request id, a way back), 404 for no such page and
// 405 with Allow for a page that takes another method (GET /portal/logout:
// signing out is the Profile page's button), never Go's plain text.
func TestPortal_UnknownPathOrWrongMethod_PortalPageNotPlainText(t *testing.T) {
	w := startPortal(t, false, false)
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
		says         string
	}{
		{http.MethodGet, "/portal/nope", http.StatusNotFound, "", "no such page"},
		{http.MethodGet, "/portal/tokens/1/nope", http.StatusNotFound, "", "no such page"},
		{http.MethodGet, "/portal/logout", http.StatusMethodNotAllowed, "POST", "Sign out"},
		{http.MethodGet, "/portal/tokens/7/revoke", http.StatusMethodNotAllowed, "POST", "button"},
		{http.MethodDelete, "/portal/", http.StatusMethodNotAllowed, "GET, HEAD", "opened"},
		{http.MethodPut, "/portal/tokens", http.StatusMethodNotAllowed, "GET, HEAD, POST", "opened"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			res, body := w.do(tc.method, w.url+tc.path, http.Header{"X-Request-Id": {"req-unrouted"}})
			got := []any{res.StatusCode, res.Header.Get("Allow"),
				strings.HasPrefix(res.Header.Get("Content-Type"), "text/html"),
				res.Header.Get("Content-Security-Policy") != "", strings.Contains(body, "req-unrouted"),
				strings.Contains(body, tc.says), strings.Contains(body, `href="/portal/"`)}
			want := []any{tc.status, tc.allow, true, true, true, true, true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("status, Allow, HTML, CSP, request id, says %q, link back (-want +got)\n%s\n%s",
					tc.says, diff, body)
			}
		})
	}
}
