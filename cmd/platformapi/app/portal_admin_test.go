package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"platformapi/resources"
)

// TestPortalAdmin_OnlyAdministrators: the page and its actions need admin;
// a refused action changes nothing.
func TestPortalAdmin_OnlyAdministrators(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("bob@example.test", "Bob", resources.PermTenancyRead)
	w.signedInAs("bob@example.test")
	res, body := w.do(http.MethodGet, w.url+"/portal/admin", nil)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "needs the permission admin") {
		t.Fatalf("GET /portal/admin as a non-administrator: %d\n%s", res.StatusCode, body)
	}
	if res, _ := w.post("/portal/admin/api", url.Values{"enabled": {"true"}}, "r1"); res.StatusCode != 403 {
		t.Fatalf("switching the API as a non-administrator: %d", res.StatusCode)
	}
	if n := w.count("SELECT count(*) FROM platform_settings WHERE api_enabled"); n != 0 {
		t.Fatalf("the API was turned on by a refused action")
	}
}

// TestPortalAdmin_APISwitchAndRoles: an administrator turns the API on
// (the API answers at once after) and gives and takes a role, each audited
// with the request; an unknown role is refused on the page.
func TestPortalAdmin_APISwitchAndRoles(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("root@example.test", "Root", resources.PermAdmin)
	ann := w.personWith("ann@example.test", "Ann")
	if _, err := w.m.Portal().CreateRole(t.Context(), resources.Actor{},
		resources.Role{Name: "auditor", Permissions: []string{resources.PermAuditRead}}); err != nil {
		t.Fatal(err)
	}
	w.signedInAs("root@example.test")
	page := w.get("/portal/admin")
	for _, want := range []string{"The API and MCP are <strong>off</strong>", "ann@example.test",
		"<option>auditor</option>", `id="installation-id"`, "State: <strong>missing</strong>"} {
		if !strings.Contains(page, want) {
			t.Fatalf("admin page lacks %q:\n%s", want, page)
		}
	}
	res, _ := w.post("/portal/admin/api", url.Values{"enabled": {"true"}}, "req-api-on")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/portal/admin?done=api-enabled" {
		t.Fatalf("API on: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if !strings.Contains(w.get("/portal/admin?done=api-enabled"), "The API and MCP are <strong>on</strong>") {
		t.Fatal("the page does not show the API on")
	}
	res, _ = w.post("/portal/admin/roles/grant", url.Values{"email": {ann.Email}, "role": {"auditor"}}, "req-grant")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("grant: %d", res.StatusCode)
	}
	res, body := w.post("/portal/admin/roles/grant", url.Values{"email": {ann.Email}, "role": {"nope"}}, "r")
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "nope") {
		t.Fatalf("grant of an unknown role: %d\n%s", res.StatusCode, body)
	}
	if res, _ = w.post("/portal/admin/roles/revoke", url.Values{"email": {ann.Email}, "role": {"auditor"}},
		"req-revoke"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", res.StatusCode)
	}
	// The same change twice: the second changes nothing, the page says so, no audit row.
	for _, step := range []struct{ verb, key string }{
		{"revoke", "role-not-held"}, {"grant", "role-granted"}, {"grant", "role-already-held"},
	} {
		res, _ = w.post("/portal/admin/roles/"+step.verb, url.Values{"email": {ann.Email},
			"role": {"auditor"}}, "req-again")
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther ||
			loc != "/portal/admin?done="+step.key {
			t.Fatalf("%s again: %d %s, want done=%s", step.verb, res.StatusCode, loc, step.key)
		}
	}
	for _, key := range []string{"role-not-held", "role-already-held"} {
		if !strings.Contains(w.get("/portal/admin?done="+key), "Nothing changed") {
			t.Errorf("the page after %s does not say nothing changed", key)
		}
	}
	if n := w.count("SELECT count(*) FROM audit_events WHERE request_id = 'req-again'"); n != 1 {
		t.Fatalf("audit rows of the repeated changes: %d, want 1 (the grant that gave it)", n)
	}
	if n := w.count(`SELECT count(*) FROM audit_events WHERE actor = 'root@example.test' AND auth_kind = 'session'
		AND request_id IN ('req-api-on', 'req-grant', 'req-revoke')`); n != 3 {
		t.Fatalf("audit rows of the three actions: %d", n)
	}
}

// TestPortalAdmin_LicenceInstall: a bundle that does not verify is refused
// with the rule's words and nothing changes; one issued for this
// installation (signed by a key the server trusts) is installed, audited.
func TestPortalAdmin_LicenceInstall(t *testing.T) {
	w := startPortalDemo(t)
	w.signedInAs(demoAdmin)
	before, err := w.m.store.StoredLicence(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	res, body := w.post("/portal/admin/licence", url.Values{"bundle": {"not-a-bundle"}}, "r1")
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `class="problem"`) {
		t.Fatalf("a bundle that does not verify: %d\n%s", res.StatusCode, body)
	}
	now := time.Now().UTC().Truncate(time.Second)
	bundle, err := resources.SignLicence(demoLicenceKey, resources.LicencePayload{Serial: "PRTL-TEST-0000-0001",
		InstallationID: before.InstallationID, Edition: "enterprise", Features: []string{resources.FeatureAI},
		Limits: map[string]int{}, ValidFrom: now.Add(-time.Hour), ValidUntil: now.AddDate(0, 6, 0)})
	if err != nil {
		t.Fatal(err)
	}
	res, body = w.post("/portal/admin/licence", url.Values{"bundle": {bundle}}, "req-licence")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("install: %d\n%s", res.StatusCode, body)
	}
	after, err := w.m.store.StoredLicence(t.Context())
	if err != nil || after.Bundle != bundle {
		t.Fatalf("the installed bundle is not the posted one: %v", err)
	}
	if !strings.Contains(w.get("/portal/admin?done=licence-installed"), "edition enterprise") {
		t.Fatal("the page does not show the new licence")
	}
	if n := w.count(`SELECT count(*) FROM audit_events WHERE action = 'licence.install' AND actor = ?
		AND request_id = 'req-licence'`, demoAdmin); n != 1 {
		t.Fatalf("audit rows of the install: %d", n)
	}
}

// TestPortalAdmin_CreatePersonAndRole: an administrator creates a role
// with keys and a person holding it; the person can then sign in and holds
// the keys; a taken e-mail is refused on the page and creates nothing.
func TestPortalAdmin_CreatePersonAndRole(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("root@example.test", "Root", resources.PermAdmin)
	w.signedInAs("root@example.test")
	res, _ := w.post("/portal/admin/roles", url.Values{"name": {"auditor"}, "description": {"reads the log"},
		"permissions": {resources.PermAuditRead}}, "req-role")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create role: %d", res.StatusCode)
	}
	res, _ = w.post("/portal/admin/users", url.Values{"email": {"cy@example.test"}, "name": {"Cy"},
		"roles": {"auditor"}}, "req-user")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/portal/admin?done=user-created" {
		t.Fatalf("create person: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res, body := w.post("/portal/admin/users", url.Values{"email": {"CY@example.test"}, "name": {"Cy again"}}, "r")
	if res.StatusCode != http.StatusConflict || !strings.Contains(body, `class="problem"`) {
		t.Fatalf("a taken e-mail: %d\n%s", res.StatusCode, body)
	}
	if n := w.count("SELECT count(*) FROM users WHERE lower(email) = 'cy@example.test'"); n != 1 {
		t.Fatalf("people with the e-mail: %d", n)
	}
	if n := w.count(`SELECT count(*) FROM audit_events WHERE actor = 'root@example.test'
		AND request_id IN ('req-role', 'req-user')`); n != 2 {
		t.Fatalf("audit rows of the two creations: %d", n)
	}
	w.signedInAs("cy@example.test")
	if page := w.page(); !strings.Contains(page, "Signed in as <strong>Cy</strong>") {
		t.Fatalf("the new person's front page:\n%s", page)
	}
}

// TestPortalAdmin_CreatePerson_RoleBeyondOwnKeys_403: a person who may
// create people (users-write-global) but is no administrator gives a new
// person only roles whose every key they hold, as POST /users allows; a
// role carrying admin is refused (403 role_not_grantable) and creates
// nobody, so nobody makes themselves an administrator through a new person.
func TestPortalAdmin_CreatePerson_RoleBeyondOwnKeys_403(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("root@example.test", "Root", resources.PermAdmin)
	w.personWith("hr@example.test", "HR", resources.PermUsersWrite)
	w.signedInAs("hr@example.test")
	res, body := w.post("/portal/admin/users", url.Values{"email": {"mallory@example.test"},
		"name": {"Mallory"}, "roles": {"r-root-example-test"}}, "r-escalate")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, resources.PermAdmin) {
		t.Fatalf("a new person with the admin role: %d\n%s", res.StatusCode, body)
	}
	if n := w.count("SELECT count(*) FROM users WHERE email = 'mallory@example.test'"); n != 0 {
		t.Fatalf("people created by the refused form: %d", n)
	}
	res, _ = w.post("/portal/admin/users", url.Values{"email": {"ann@example.test"}, "name": {"Ann"},
		"roles": {"r-hr-example-test"}}, "r-own")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a new person with a role of keys held: %d", res.StatusCode)
	}
}
