package api_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

const mergePatch = "application/merge-patch+json"

// userEnv starts an Env with roles "auditor" (audit-read) and "releaser"
// (releases-write), and an admin token holding users-*, audit-read, Allow destroy.
func userEnv(t *testing.T) (*apitest.Env, string) {
	t.Helper()
	e := apitest.New(t, apitest.Options{})
	for name, key := range map[string]string{"auditor": resources.PermAuditRead, "releaser": resources.PermReleasesWrite} {
		if _, err := e.Portal.CreateRole(context.Background(), resources.Actor{Label: apitest.AdminEmail}, resources.Role{Name: name, Permissions: []string{key}}); err != nil {
			t.Fatal(err)
		}
	}
	return e, e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "u", AllowDestroy: true,
		Scopes: []string{resources.PermUsersRead, resources.PermUsersWrite, resources.PermAuditRead}})
}

func invite(t *testing.T, e *apitest.Env, tok, email string, roles ...string) map[string]any {
	t.Helper()
	body := map[string]any{"email": email, "display_name": "Someone"}
	if roles != nil {
		body["roles"] = roles
	}
	r := e.Do("POST", "/api/v1/users", tok, body)
	if r.Status != 201 {
		t.Fatalf("invite %s: %d %s", email, r.Status, r.Body)
	}
	return r.JSON(t)
}

func TestUsers_Invite_201ActiveNormalisedSortedRolesNoPasswordOneAuditEvent(t *testing.T) {
	e, tok := userEnv(t)
	r := e.Do("POST", "/api/v1/users", tok, map[string]any{"email": " Ann Lee <Ann.Lee@EXAMPLE.Test> ",
		"display_name": "Ann Lee", "roles": []string{"auditor"}}, "X-Request-ID", "invite-ann")
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	u := r.JSON(t)
	if r.Header.Get("Location") != "/api/v1/users/"+u["id"].(string) {
		t.Fatalf("Location %q", r.Header.Get("Location"))
	}
	if keys := slices.Sorted(maps.Keys(u)); strings.Join(keys, ",") != "created_at,deactivated_at,display_name,email,id,roles,status,updated_at" {
		t.Fatalf("members: %v", keys)
	}
	if u["email"] != "Ann.Lee@example.test" || u["status"] != "active" || u["deactivated_at"] != nil ||
		u["roles"].([]any)[0] != "auditor" {
		t.Fatalf("user: %v", u)
	}
	if got := e.Do("GET", "/api/v1/users/"+u["id"].(string), tok, nil).JSON(t); got["email"] != u["email"] {
		t.Fatalf("read back: %v", got)
	}
	items, _ := auditItems(t, e, tok, "?entity_type=user&action=user.invite")
	if len(items) != 1 {
		t.Fatalf("invite events: %d", len(items))
	}
	ev := items[0]
	if ev["actor"] != apitest.AdminEmail || ev["auth_kind"] != "pat" || ev["token_id"] == nil || ev["request_id"] != "invite-ann" ||
		ev["entity_id"] != u["id"] || ev["before_state"] != nil || ev["after_state"].(map[string]any)["email"] != "Ann.Lee@example.test" {
		t.Fatalf("event: %v", ev)
	}
}

func TestUsers_Invite_RolesSortedAndDisplayNameBounds(t *testing.T) {
	e, tok := userEnv(t)
	r := e.Do("POST", "/api/v1/users", e.Token(resources.PermUsersWrite, resources.PermAuditRead, resources.PermReleasesWrite),
		map[string]any{"email": "bo@example.test", "display_name": strings.Repeat("é", 120), "roles": []string{"releaser", "auditor"}})
	if r.Status != 201 || strings.Join(anyStrings(r.JSON(t)["roles"]), ",") != "auditor,releaser" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if u := invite(t, e, tok, "cy@example.test"); len(u["roles"].([]any)) != 0 {
		t.Fatalf("roles omitted: %v", u["roles"])
	}
}

func TestUsers_Invite_FieldRules_422WithField(t *testing.T) {
	e, tok := userEnv(t)
	body := func(k string, v any) map[string]any {
		b := map[string]any{"email": "x@example.test", "display_name": "X", "roles": []string{"auditor"}}
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	many := strings.Fields("a b c d e f g h i j k l m n o p q r s t u") // 21 roles
	cases := []struct {
		body  map[string]any
		field string
	}{
		{body("email", "not-an-address"), "email"}, {body("email", nil), "email"}, {body("display_name", ""), "display_name"},
		{body("display_name", strings.Repeat("x", 121)), "display_name"}, {body("display_name", nil), "display_name"},
		{body("roles", []string{"auditor", "auditor"}), "roles"}, {body("roles", many), "roles"},
		{body("password", "hunter2"), "password"}, {body("status", "deactivated"), "status"},
	}
	for _, c := range cases {
		m := assertProblem(t, e.Do("POST", "/api/v1/users", tok, c.body), 422, "validation_failed")
		if m["field"] != c.field {
			t.Errorf("%v: field %v, want %s", c.body, m["field"], c.field)
		}
	}
	m := assertProblem(t, e.Do("POST", "/api/v1/users", tok, body("roles", []string{"auditor", "nobody"})), 422, "role_not_found")
	if m["field"] != "roles" {
		t.Fatalf("field: %v", m["field"])
	}
	if n := count(t, e, "SELECT count(*) FROM users"); n != 1 {
		t.Fatalf("users written: %d", n)
	}
}

func TestUsers_Invite_EmailTakenCaseInsensitive_409(t *testing.T) {
	e, tok := userEnv(t)
	invite(t, e, tok, "ann@example.test")
	assertProblem(t, e.Do("POST", "/api/v1/users", tok, map[string]any{"email": "ANN@Example.TEST", "display_name": "A"}), 409, "email_taken")
	assertProblem(t, e.Do("POST", "/api/v1/users", tok, map[string]any{"email": "Admin@example.test", "display_name": "A"}), 409, "email_taken")
}

// TestUsers_Invite_RoleBeyondCallerScopes_403: giving a role needs every
// key it carries, so the refusal is role_not_grantable naming the missing
// keys, not forbidden, whose `required` means "any one would do".
func TestUsers_Invite_RoleBeyondCallerScopes_403(t *testing.T) {
	e, tok := userEnv(t)
	m := assertProblem(t, e.Do("POST", "/api/v1/users", tok, map[string]any{"email": "x@example.test", "display_name": "X",
		"roles": []string{"auditor", "releaser"}}), 403, "role_not_grantable")
	if m["required"] != nil || !strings.Contains(m["detail"].(string), resources.PermReleasesWrite) ||
		m["remedy"] != "Ask an administrator to give the role(s), or for a token with "+
			"releases-write-global." {
		t.Fatalf("required: %v, remedy %v", m["required"], m["remedy"])
	}
	if n := count(t, e, "SELECT count(*) FROM users"); n != 1 {
		t.Fatalf("users written: %d", n)
	}
	invite(t, e, tok, "x@example.test", "auditor")
}

// TestUsers_Invite_RoleWithKeyNoTokenCarries_RemedyPointsToThePortal: the
// role admin carries the key admin, which no token ever holds, so asking
// "for a token with" it cannot help: the remedy sends the caller to a
// person in the portal.
func TestUsers_Invite_RoleWithKeyNoTokenCarries_RemedyPointsToThePortal(t *testing.T) {
	e, tok := userEnv(t)
	m := assertProblem(t, e.Do("POST", "/api/v1/users", tok, map[string]any{"email": "x@example.test",
		"display_name": "X", "roles": []string{"admin"}}), 403, "role_not_grantable")
	want := "Ask an administrator to give the role(s) in the portal (Administration, or platformapi " +
		"portal role grant): admin can never be put on a token, so no token can give them."
	if d := cmp.Diff(want, m["remedy"]); d != "" || m["required"] != nil {
		t.Fatalf("required %v; remedy (-want +got):\n%s", m["required"], d)
	}
	if n := count(t, e, "SELECT count(*) FROM users"); n != 1 {
		t.Fatalf("users written: %d", n)
	}
}

func TestUsers_Invite_IdempotentReplay(t *testing.T) {
	e, tok := userEnv(t)
	b := map[string]any{"email": "ann@example.test", "display_name": "Ann", "roles": []string{"auditor"}}
	first := e.Do("POST", "/api/v1/users", tok, b, "Idempotency-Key", "inv-1")
	again := e.Do("POST", "/api/v1/users", tok, b, "Idempotency-Key", "inv-1")
	if first.Status != 201 || again.Status != 201 || string(first.Body) != string(again.Body) ||
		again.Header.Get("Idempotent-Replayed") != "true" || again.Header.Get("Location") != first.Header.Get("Location") {
		t.Fatalf("replay: %d %d %v\n%s\n%s", first.Status, again.Status, again.Header, first.Body, again.Body)
	}
	b["display_name"] = "Other"
	assertProblem(t, e.Do("POST", "/api/v1/users", tok, b, "Idempotency-Key", "inv-1"), 409, "idempotency_key_reused")
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'user.invite'"); n != 1 {
		t.Fatalf("invite events: %d", n)
	}
}

func TestUsers_Invite_FaultBetweenCommitAndStoredAnswer_RetryCreatesNoSecondUser(t *testing.T) {
	faulty := &finishFails{fail: true}
	e := apitest.New(t, apitest.Options{Idempotency: func(st resources.Idempotency) resources.Idempotency {
		faulty.Idempotency = st
		return faulty
	}})
	tok := e.Token(resources.PermUsersWrite)
	b := map[string]any{"email": "ann@example.test", "display_name": "Ann"}
	first := e.Do("POST", "/api/v1/users", tok, b, "Idempotency-Key", "crash")
	if first.Status != 201 {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	e.Clock.Advance(resources.IdempotencyLeaseTTL + time.Second)
	retry := e.Do("POST", "/api/v1/users", tok, b, "Idempotency-Key", "crash")
	if retry.Status != 201 || retry.JSON(t)["id"] != first.JSON(t)["id"] {
		t.Fatalf("retry: %d %s", retry.Status, retry.Body)
	}
	if n := count(t, e, "SELECT count(*) FROM users WHERE email = 'ann@example.test'"); n != 1 {
		t.Fatalf("users after the retry: %d", n)
	}
}

func TestUsers_Get_UnknownOrMalformedID_404And400(t *testing.T) {
	e, tok := userEnv(t)
	assertProblem(t, e.Do("GET", "/api/v1/users/999", tok, nil), 404, "user_not_found")
	assertProblem(t, e.Do("GET", "/api/v1/users/0", tok, nil), 400, "invalid_parameter")
	assertProblem(t, e.Do("PATCH", "/api/v1/users/999", tok, map[string]any{"display_name": "X"}), 404, "user_not_found")
	assertProblem(t, e.Do("DELETE", "/api/v1/users/999", tok, nil), 404, "user_not_found")
}

func TestUsers_Permissions_ReadOrWriteListsWriteNeededToChange_403(t *testing.T) {
	e, _ := userEnv(t)
	for _, scope := range []string{resources.PermUsersRead, resources.PermUsersWrite} {
		if r := e.Do("GET", "/api/v1/users", e.Token(scope), nil); r.Status != 200 {
			t.Fatalf("list with %s: %d", scope, r.Status)
		}
	}
	read := e.Token(resources.PermUsersRead)
	m := assertProblem(t, e.Do("POST", "/api/v1/users", read, map[string]any{"email": "a@b.test", "display_name": "A"}), 403, "forbidden")
	if strings.Join(anyStrings(m["required"]), ",") != resources.PermUsersWrite {
		t.Fatalf("required: %v", m["required"])
	}
	assertProblem(t, e.Do("GET", "/api/v1/users/1", e.Token(resources.PermAuditRead), nil), 403, "forbidden")
}

func TestUsers_List_FiltersEmailStatusRoleCombine(t *testing.T) {
	e, tok := userEnv(t)
	invite(t, e, tok, "ann@example.test", "auditor")
	bob := invite(t, e, tok, "Bob@example.test", "auditor")
	invite(t, e, tok, "cy@example.test")
	e.Do("DELETE", "/api/v1/users/"+bob["id"].(string), tok, nil)
	for q, want := range map[string]string{"": "admin,ann,Bob,cy", "?role=auditor": "ann,Bob", "?status=deactivated": "Bob",
		"?role=auditor&status=active": "ann", "?role=admin": "admin", "?email=" + "Ann%20%3Cann@EXAMPLE.test%3E": "ann",
		"?email=BOB@example.test": "Bob", "?email=ann@example.test&role=releaser": "", "?role=nobody": ""} {
		var got []string
		for _, it := range e.Do("GET", "/api/v1/users"+q, tok, nil).JSON(t)["items"].([]any) {
			email := it.(map[string]any)["email"].(string)
			got = append(got, email[:strings.IndexByte(email, '@')])
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: %v, want %s", q, got, want)
		}
	}
	assertProblem(t, e.Do("GET", "/api/v1/users?status=gone", tok, nil), 400, "invalid_parameter")
	assertProblem(t, e.Do("GET", "/api/v1/users?email=nope", tok, nil), 400, "invalid_parameter")
}

func TestUsers_List_CursorPagesInIDOrderBoundToFilters(t *testing.T) {
	e, tok := userEnv(t)
	for _, n := range []string{"a", "b", "c", "d"} {
		invite(t, e, tok, n+"@example.test", "auditor")
	}
	var ids []string
	cursor := ""
	for {
		m := e.Do("GET", "/api/v1/users?role=auditor&limit=3"+apitest.CursorParam(cursor), tok, nil).JSON(t)
		for _, it := range m["items"].([]any) {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		if m["next_cursor"] == nil {
			break
		}
		cursor = m["next_cursor"].(string)
		assertProblem(t, e.Do("GET", "/api/v1/users?limit=3&cursor="+cursor, tok, nil), 400, "invalid_cursor")
	}
	if strings.Join(ids, ",") != "2,3,4,5" {
		t.Fatalf("ids: %v", ids)
	}
	assertProblem(t, e.Do("GET", "/api/v1/users?cursor=made-up", tok, nil), 400, "invalid_cursor")
}

func TestUsers_Patch_DisplayNameAndRolesReplaceTheSetOneAuditEvent(t *testing.T) {
	e, tok := userEnv(t)
	u := invite(t, e, tok, "ann@example.test", "auditor")
	path := "/api/v1/users/" + u["id"].(string)
	m := e.Do("PATCH", path, tok, `{"display_name":"Ann Lee","roles":[]}`, "Content-Type", mergePatch).JSON(t)
	if m["display_name"] != "Ann Lee" || len(m["roles"].([]any)) != 0 || m["email"] != "ann@example.test" || m["updated_at"] == u["updated_at"] {
		t.Fatalf("patched: %v", m)
	}
	if n := count(t, e, "SELECT count(*) FROM user_roles WHERE user_id = "+u["id"].(string)); n != 0 {
		t.Fatalf("role rows: %d", n)
	}
	m = e.Do("PATCH", path, tok, map[string]any{"roles": []string{"auditor"}}).JSON(t)
	if m["display_name"] != "Ann Lee" || strings.Join(anyStrings(m["roles"]), ",") != "auditor" {
		t.Fatalf("application/json patch: %v", m)
	}
	items, _ := auditItems(t, e, tok, "?action=user.update&entity_id="+u["id"].(string))
	if len(items) != 2 || items[1]["before_state"].(map[string]any)["display_name"] != "Someone" ||
		len(items[1]["after_state"].(map[string]any)["roles"].([]any)) != 0 || items[0]["auth_kind"] != "pat" {
		t.Fatalf("update events: %v", items)
	}
}

func TestUsers_Patch_NullDisplayName_422(t *testing.T) {
	e, tok := userEnv(t)
	path := "/api/v1/users/" + invite(t, e, tok, "ann@example.test")["id"].(string)
	for _, member := range []string{"display_name", "roles"} {
		m := assertProblem(t, e.Do("PATCH", path, tok, `{"`+member+`":null}`, "Content-Type", mergePatch), 422, "validation_failed")
		if m["field"] != member {
			t.Errorf("null %s: field %v", member, m["field"])
		}
	}
	for body, field := range map[string]string{`{"email":"new@example.test"}`: "email", `{"password":"x"}`: "password",
		`{"display_name":""}`: "display_name", `{"roles":["auditor","auditor"]}`: "roles", `{"status":"active"}`: "status"} {
		if m := assertProblem(t, e.Do("PATCH", path, tok, body, "Content-Type", mergePatch), 422, "validation_failed"); m["field"] != field {
			t.Errorf("%s: field %v", body, m["field"])
		}
	}
	assertProblem(t, e.Do("PATCH", path, tok, `{"roles":["nobody"]}`, "Content-Type", mergePatch), 422, "role_not_found")
	assertProblem(t, e.Do("PATCH", path, tok, `[]`, "Content-Type", "application/json-patch+json"), 415, "unsupported_media_type")
}

func TestUsers_Patch_NoOpWritesNothing(t *testing.T) {
	e, tok := userEnv(t)
	u := invite(t, e, tok, "ann@example.test", "auditor")
	m := e.Do("PATCH", "/api/v1/users/"+u["id"].(string), tok, map[string]any{"display_name": "Someone", "roles": []string{"auditor"}})
	if m.Status != 200 || m.JSON(t)["updated_at"] != u["updated_at"] {
		t.Fatalf("no-op: %d %s", m.Status, m.Body)
	}
	e.Do("PATCH", "/api/v1/users/"+u["id"].(string), tok, `{}`, "Content-Type", mergePatch)
	if n := count(t, e, "SELECT count(*) FROM audit_events WHERE action = 'user.update'"); n != 0 {
		t.Fatalf("update events: %d", n)
	}
}

func TestUsers_Patch_RoleBeyondCallerScopes_403KeptRolesNotChecked(t *testing.T) {
	e, tok := userEnv(t)
	wide := e.Token(resources.PermUsersWrite, resources.PermReleasesWrite)
	ann := "/api/v1/users/" + invite(t, e, wide, "ann@example.test", "releaser")["id"].(string)
	bo := "/api/v1/users/" + invite(t, e, tok, "bo@example.test")["id"].(string)
	m := assertProblem(t, e.Do("PATCH", bo, tok, map[string]any{"roles": []string{"auditor", "releaser"}}), 403,
		"role_not_grantable")
	if m["required"] != nil || !strings.HasSuffix(m["detail"].(string), "it lacks "+resources.PermReleasesWrite) {
		t.Fatalf("detail: %v", m["detail"])
	}
	r := e.Do("PATCH", ann, tok, map[string]any{"roles": []string{"auditor", "releaser"}, "display_name": "Ann"})
	if r.Status != 200 || strings.Join(anyStrings(r.JSON(t)["roles"]), ",") != "auditor,releaser" {
		t.Fatalf("kept releaser, added auditor: %d %s", r.Status, r.Body)
	}
	if n := count(t, e, "SELECT count(*) FROM user_roles WHERE role = 'releaser'"); n != 1 {
		t.Fatalf("releaser holders: %d", n)
	}
}

func TestUsers_Patch_Deactivated_409UserDeactivated(t *testing.T) {
	e, tok := userEnv(t)
	path := "/api/v1/users/" + invite(t, e, tok, "ann@example.test")["id"].(string)
	e.Do("DELETE", path, tok, nil)
	assertProblem(t, e.Do("PATCH", path, tok, map[string]any{"display_name": "Ann"}), 409, "user_deactivated")
}

func TestUsers_Deactivate_204OnceAgainChangesNothing(t *testing.T) {
	e, tok := userEnv(t)
	path := "/api/v1/users/" + invite(t, e, tok, "ann@example.test", "auditor")["id"].(string)
	assertProblem(t, e.Do("DELETE", path, e.Token(resources.PermUsersWrite), nil), 403, "destroy_not_allowed")
	var at any
	for i := range 2 {
		if r := e.Do("DELETE", path, tok, nil); r.Status != 204 || len(r.Body) != 0 {
			t.Fatalf("deactivate: %d %s", r.Status, r.Body)
		}
		m := e.Do("GET", path, tok, nil).JSON(t)
		if m["status"] != "deactivated" || m["deactivated_at"] == nil || i == 1 && m["deactivated_at"] != at {
			t.Fatalf("after deactivation %d: %v", i, m)
		}
		at = m["deactivated_at"]
	}
	items, _ := auditItems(t, e, tok, "?action=user.deactivate")
	if len(items) != 1 || items[0]["before_state"].(map[string]any)["status"] != "active" ||
		items[0]["after_state"].(map[string]any)["status"] != "deactivated" {
		t.Fatalf("deactivate events: %v", items)
	}
	if n := count(t, e, "SELECT count(*) FROM users"); n != 2 {
		t.Fatalf("people are never deleted: %d", n)
	}
}

func TestUsers_Deactivate_Self_409CannotDeactivateSelf(t *testing.T) {
	e, tok := userEnv(t)
	assertProblem(t, e.Do("DELETE", "/api/v1/users/1", tok, nil), 409, "cannot_deactivate_self")
	if m := e.Do("GET", "/api/v1/users/1", tok, nil).JSON(t); m["status"] != "active" {
		t.Fatalf("admin: %v", m)
	}
}

func TestUsers_Deactivate_TokensAnswer401PrincipalDisabled(t *testing.T) {
	e, tok := userEnv(t)
	ctx := context.Background()
	if _, err := e.Portal.CreateRole(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.Role{Name: "minter", Permissions: []string{resources.PermAPITokensAdmin}}); err != nil {
		t.Fatal(err)
	}
	id := invite(t, e, tok, "ann@example.test", "auditor")["id"].(string)
	if _, err := e.Portal.GrantRole(ctx, resources.Actor{Label: apitest.AdminEmail}, "ann@example.test", "minter"); err != nil {
		t.Fatal(err)
	}
	ann := e.TokenFor("ann@example.test", resources.NewToken{Name: "ann", Scopes: []string{resources.PermAuditRead}})
	if r := e.Do("GET", "/api/v1/whoami", ann, nil); r.Status != 200 {
		t.Fatalf("before: %d %s", r.Status, r.Body)
	}
	if r := e.Do("DELETE", "/api/v1/users/"+id, tok, nil); r.Status != 204 {
		t.Fatalf("deactivate: %d %s", r.Status, r.Body)
	}
	assertProblem(t, e.Do("GET", "/api/v1/whoami", ann, nil), 401, "principal_disabled")
	assertProblem(t, e.Do("GET", "/api/v1/audit-events", ann, nil), 401, "principal_disabled")
}

func anyStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestUsers_OpenAPI_RoleBeyondCallerNamesRoleNotGrantable: the served
// descriptions of invite and patch name the 403 the API answers for a role
// the caller cannot give (role_not_grantable), not forbidden with required.
func TestUsers_OpenAPI_RoleBeyondCallerNamesRoleNotGrantable(t *testing.T) {
	e, _ := userEnv(t)
	for path, method := range map[string]string{"/users": "post", "/users/{user_id}": "patch"} {
		d := servedDescription(t, e, method, path)
		if !strings.Contains(d, "role_not_grantable") || strings.Contains(d, "403 forbidden") {
			t.Errorf("%s %s: %q", method, path, d)
		}
	}
}
