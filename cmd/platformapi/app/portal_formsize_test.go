package app

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"platformapi/resources"
)

// TestPortalForms_Oversized_413NothingChanged: a form body larger than its
// form needs (64 KiB; the licence form: the API's 1 MiB) answers a 413
// page saying so and changes nothing, whether the size is declared or the
// body is sent in chunks; the licence form still takes a body over 64 KiB.
func TestPortalForms_Oversized_413NothingChanged(t *testing.T) {
	w := startPortal(t, false, false)
	w.enableAPI()
	w.personWith("ada@example.test", "Ada", resources.PermAdmin, resources.PermAPITokensAdmin,
		resources.PermTenancyRead)
	m, err := w.m.Portal().CreateToken(t.Context(), resources.Actor{Label: "ada@example.test"},
		resources.NewToken{Name: "keep", Scopes: []string{resources.PermTenancyRead}, Days: 10})
	if err != nil {
		t.Fatal(err)
	}
	w.signedInAs("ada@example.test")
	id := strconv.FormatInt(m.Token.ID, 10)
	pad := strings.Repeat("x", 65<<10)
	cases := []struct {
		name, path string
		form       url.Values
		chunked    bool
		status     int
	}{
		{"token create", "/portal/tokens", url.Values{"name": {"big"}, "scopes": {resources.PermTenancyRead},
			"days": {"30"}, "allowed_ips": {pad}}, false, 413},
		{"token create, chunked", "/portal/tokens", url.Values{"name": {"big"}, "days": {"30"}, "pad": {pad}},
			true, 413},
		{"token revoke", "/portal/tokens/" + id + "/revoke", url.Values{"pad": {pad}}, false, 413},
		{"new person", "/portal/admin/users", url.Values{"email": {"eve@example.test"}, "name": {pad}}, false, 413},
		{"licence over 64 KiB is read", "/portal/admin/licence", url.Values{"bundle": {pad}}, false, 422},
		{"licence over 1 MiB", "/portal/admin/licence", url.Values{"bundle": {strings.Repeat(pad, 17)}},
			true, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(c.form.Encode())
			if c.chunked { // no Content-Length: the limit stops the read
				body = io.MultiReader(body)
			}
			res, page := w.send(http.MethodPost, w.url+c.path, http.Header{"Origin": {w.url},
				"Content-Type": {"application/x-www-form-urlencoded"}}, body)
			if res.StatusCode != c.status {
				t.Fatalf("POST %s: %d, want %d\n%s", c.path, res.StatusCode, c.status, page)
			}
			if c.status == 413 && !strings.Contains(page, "larger than this form takes") {
				t.Fatalf("the 413 page does not say why:\n%s", page)
			}
		})
	}
	got := []int{w.count("SELECT count(*) FROM api_tokens"),
		w.count("SELECT count(*) FROM api_tokens WHERE revoked_at IS NOT NULL"),
		w.count("SELECT count(*) FROM users WHERE email = 'eve@example.test'")}
	if got[0] != 1 || got[1] != 0 || got[2] != 0 {
		t.Fatalf("tokens, revoked tokens, new people after the refusals: %v, want [1 0 0]", got)
	}
}
