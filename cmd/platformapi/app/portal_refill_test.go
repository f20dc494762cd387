package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"platformapi/resources"
)

// TestPortalAdmin_RefusedForms_KeepWhatWasTyped: a refused new person or
// new role shows the page again with what the administrator typed (and only
// in the form that was posted), as the mint form does. A refused licence
// bundle is not sent back: a licence is a secret the server never sends.
func TestPortalAdmin_RefusedForms_KeepWhatWasTyped(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("root@example.test", "Root", resources.PermAdmin)
	if _, err := w.m.Portal().CreateRole(t.Context(), resources.Actor{},
		resources.Role{Name: "auditor", Permissions: []string{resources.PermAuditRead}}); err != nil {
		t.Fatal(err)
	}
	w.signedInAs("root@example.test")
	cases := []struct {
		path      string
		form      url.Values
		want, not []string
	}{
		{"/portal/admin/users", url.Values{"email": {"not-an-address"}, "name": {"Cy Typed"},
			"roles": {"auditor"}}, []string{`name="email" required maxlength="254" value="not-an-address"`,
			`value="Cy Typed"`, `name="roles" value="auditor" checked`}, nil},
		{"/portal/admin/roles", url.Values{"name": {"Bad Name!"}, "description": {"reads the log"},
			"permissions": {resources.PermAuditRead}}, []string{`value="Bad Name!"`, `value="reads the log"`,
			`name="permissions" value="` + resources.PermAuditRead + `" checked`}, nil},
		{"/portal/admin/licence", url.Values{"bundle": {"pasted-bundle-text"}},
			[]string{`required></textarea>`}, []string{"pasted-bundle-text"}},
	}
	for _, c := range cases {
		res, body := w.post(c.path, c.form, "r")
		if res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d\n%s", c.path, res.StatusCode, body)
		}
		for _, want := range c.want {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the refused form lost what was typed, no %q", c.path, want)
			}
		}
		for _, secret := range c.not {
			if strings.Contains(body, secret) {
				t.Errorf("%s: the answer sends back %q", c.path, secret)
			}
		}
		typed := `maxlength="254" value="not-an-address"`
		if c.path != "/portal/admin/users" && strings.Contains(body, typed) {
			t.Errorf("%s: another form was filled", c.path)
		}
	}
}

// TestPortalTokens_RefusedServiceAccount_KeepsWhatWasTyped: a refused new
// service account shows the form again with its name, description and
// ticked permissions.
func TestPortalTokens_RefusedServiceAccount_KeepsWhatWasTyped(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("ada@example.test", "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	w.signedInAs("ada@example.test")
	res, body := w.post("/portal/service-accounts", url.Values{"name": {"Bad Name!"},
		"description": {"ships things"}, "permissions": {resources.PermTenancyRead}}, "r")
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("refused service account: %d\n%s", res.StatusCode, body)
	}
	for _, want := range []string{`maxlength="80" value="Bad Name!"`, `value="ships things"`,
		`name="permissions" value="` + resources.PermTenancyRead + `" checked`} {
		if !strings.Contains(body, want) {
			t.Errorf("the refused form lost what was typed, no %q", want)
		}
	}
}

// TestPortalAdmin_APISwitch_RefusesAValueOtherThanTrueOrFalse: only
// enabled=true or enabled=false switch the API; anything else is refused
// with 422 and the API stays as it was.
func TestPortalAdmin_APISwitch_RefusesAValueOtherThanTrueOrFalse(t *testing.T) {
	w := startPortal(t, false, false)
	w.enableAPI() // as root@example.test, an administrator
	w.signedInAs("root@example.test")
	for _, v := range []string{"", "maybe", "on"} {
		res, body := w.post("/portal/admin/api", url.Values{"enabled": {v}}, "r")
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "enabled") {
			t.Errorf("enabled=%q: %d, want 422 naming enabled", v, res.StatusCode)
		}
	}
	if n := w.count("SELECT count(*) FROM platform_settings WHERE api_enabled"); n != 1 {
		t.Fatalf("a refused switch turned the API off")
	}
}

// TestPortalTokens_Minted_CurlExampleNamesTheServer: the example under a
// new token's value is a command that works as copied: the API's full
// address, not a bare path.
func TestPortalTokens_Minted_CurlExampleNamesTheServer(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("ada@example.test", "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	w.signedInAs("ada@example.test")
	_, body := w.post("/portal/tokens", w.mintForm(url.Values{"name": {"laptop"},
		"scopes": {resources.PermTenancyRead}, "days": {"7"}}), "r")
	if want := w.url + "/api/v1/whoami"; !strings.Contains(body, want) {
		t.Fatalf("the curl example does not name %s:\n%s", want, body)
	}
}

// TestPortalPages_SignedOutOrSigningOut_FrontPageSaysWhy: a page opened
// without a session, and the sign-out, land on the front page with a
// sentence saying why (sign in first; signed out), not a bare front page.
func TestPortalPages_SignedOutOrSigningOut_FrontPageSaysWhy(t *testing.T) {
	w := startPortal(t, false, false)
	w.person("ada@example.test", "Ada Lovelace")
	res, _ := w.do(http.MethodGet, w.url+"/portal/tokens", nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/portal/?") {
		t.Fatalf("GET /portal/tokens signed out: %d %s", res.StatusCode, loc)
	}
	if page := w.get(loc); !strings.Contains(page, "Sign in to open that page") {
		t.Errorf("the front page does not say to sign in first:\n%s", page)
	}
	w.signIn(verifiedUser("ada@example.test"), "r")
	res, _ = w.do(http.MethodPost, w.url+"/portal/logout", http.Header{"Sec-Fetch-Site": {"same-origin"}})
	loc = res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(w.get(loc), "You are signed out") {
		t.Errorf("sign-out: %d to %s, which does not say so", res.StatusCode, loc)
	}
}

// TestPortalPages_RowActions_NameTheirRow: the buttons and fields repeated
// on every row (Revoke, Extend and its days, Give and its role) have
// accessible names that say which token or person they act on, so a
// screen reader does not read "Revoke" ten times.
func TestPortalPages_RowActions_NameTheirRow(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("root@example.test", "Root", resources.PermAdmin, resources.PermAPITokensAdmin,
		resources.PermTenancyRead)
	w.signedInAs("root@example.test")
	if res, body := w.post("/portal/tokens", w.mintForm(url.Values{"name": {"laptop"},
		"scopes": {resources.PermTenancyRead}, "days": {"7"}}), "r"); res.StatusCode != http.StatusOK {
		t.Fatalf("mint: %d\n%s", res.StatusCode, body)
	}
	tokens, admin := w.get("/portal/tokens"), w.get("/portal/admin")
	for _, want := range []string{`aria-label="Revoke the token laptop"`,
		`aria-label="Extend the token laptop"`, `aria-label="Days from now until laptop expires"`} {
		if !strings.Contains(tokens, want) {
			t.Errorf("tokens page: no %s", want)
		}
	}
	for _, want := range []string{`aria-label="Role to give root@example.test"`,
		`aria-label="Give root@example.test the chosen role"`} {
		if !strings.Contains(admin, want) {
			t.Errorf("admin page: no %s", want)
		}
	}
}
