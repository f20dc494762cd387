package app

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"platformapi/resources"
)

// personWith creates an active person holding keys (through a role of
// their own; no keys: no role).
func (w *portalWorld) personWith(email, name string, keys ...string) resources.User {
	w.t.Helper()
	u := resources.NewUser{Email: email, DisplayName: name}
	if len(keys) > 0 {
		role := "r-" + strings.NewReplacer("@", "-", ".", "-").Replace(email)
		if _, err := w.m.Portal().CreateRole(w.t.Context(), resources.Actor{},
			resources.Role{Name: role, Permissions: keys}); err != nil {
			w.t.Fatal(err)
		}
		u.Roles = []string{role}
	}
	created, err := w.m.Portal().CreateUser(w.t.Context(), resources.Actor{}, u)
	if err != nil {
		w.t.Fatal(err)
	}
	return created
}

// signedInAs creates nothing: it signs the person with email in (the
// provider vouching) and fails the test unless it worked.
func (w *portalWorld) signedInAs(email string) {
	w.t.Helper()
	if res, body := w.signIn(verifiedUser(email), "req-sign-in"); res.StatusCode != http.StatusSeeOther {
		w.t.Fatalf("sign-in of %s: %d %s", email, res.StatusCode, body)
	}
}

// post submits a form from the portal's own pages (same origin) with a
// request id, returning the answer with its body.
func (w *portalWorld) post(path string, form url.Values, requestID string) (*http.Response, string) {
	w.t.Helper()
	return w.postForm(path, form, http.Header{"Origin": {w.url}, "Sec-Fetch-Site": {"same-origin"},
		"X-Request-Id": {requestID}})
}

// get reads a portal page, which must answer 200.
func (w *portalWorld) get(path string) string {
	w.t.Helper()
	res, body := w.do(http.MethodGet, w.url+path, nil)
	if res.StatusCode != http.StatusOK {
		w.t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	return body
}

// api calls /api/v1 with a bearer token and returns the status and body.
func (w *portalWorld) api(method, path, token string) (int, string) {
	w.t.Helper()
	res, body := w.do(method, w.url+"/api/v1"+path, http.Header{"Authorization": {"Bearer " + token}})
	return res.StatusCode, body
}

// tokenValueField finds the one-time token value on the minted page.
var tokenValueField = regexp.MustCompile(`id="token-value" class="secret" type="text" readonly value="([^"]+)"`)

// mintedValue is the token value the minted page shows ("" none).
func mintedValue(body string) string {
	m := tokenValueField.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}
