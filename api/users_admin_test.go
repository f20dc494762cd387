package api_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

func TestUsers_Deactivate_LastAdministrator_409(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	if _, err := e.Portal.CreateRole(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.Role{Name: "people-admin",
		Permissions: []string{resources.PermUsersWrite, resources.PermAPITokensAdmin}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []resources.NewUser{{Email: "hr@example.test", DisplayName: "HR", Roles: []string{"people-admin"}},
		{Email: "next@example.test", DisplayName: "Next Admin"}} {
		if _, err := e.Portal.CreateUser(ctx, resources.Actor{Label: apitest.AdminEmail}, u); err != nil {
			t.Fatal(err)
		}
	}
	hr := e.TokenFor("hr@example.test", resources.NewToken{Name: "hr", Scopes: []string{resources.PermUsersWrite}, AllowDestroy: true})
	assertProblem(t, e.Do("DELETE", "/api/v1/users/1", hr, nil), 409, "last_administrator")
	if _, err := e.Portal.GrantRole(ctx, resources.Actor{Label: apitest.AdminEmail}, "next@example.test", "admin"); err != nil {
		t.Fatal(err)
	}
	if r := e.Do("DELETE", "/api/v1/users/1", hr, nil); r.Status != 204 {
		t.Fatalf("with another administrator: %d %s", r.Status, r.Body)
	}
}

func TestUsers_RemovingTheLastAdministratorsRole_409(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	if _, err := e.Portal.CreateUser(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.NewUser{Email: "hr@example.test", DisplayName: "HR"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Portal.RevokeRole(ctx, resources.Actor{Label: apitest.AdminEmail}, apitest.AdminEmail, "admin"); err == nil {
		t.Fatal("the last administrator's admin role was revoked")
	}
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "u", Scopes: []string{resources.PermUsersWrite}})
	assertProblem(t, e.Do("PATCH", "/api/v1/users/1", tok, map[string]any{"roles": []string{}}), 409, "last_administrator")
	if _, err := e.Portal.GrantRole(ctx, resources.Actor{Label: apitest.AdminEmail}, "hr@example.test", "admin"); err != nil {
		t.Fatal(err)
	}
	if r := e.Do("PATCH", "/api/v1/users/1", tok, map[string]any{"roles": []string{}}); r.Status != 200 {
		t.Fatalf("with another administrator: %d %s", r.Status, r.Body)
	}
}

// Taking away a role the person does not hold is refused (422, field
// role, naming both), and giving a role the person already holds changes
// nothing: neither writes an audit row, as nothing was written.
func TestUsers_RoleChangesThatChangeNothing_RefusedOrNoAuditRow(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx, admin := context.Background(), resources.Actor{Label: apitest.AdminEmail}
	if _, err := e.Portal.CreateRole(ctx, admin, resources.Role{Name: "auditor",
		Permissions: []string{resources.PermAuditRead}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Portal.CreateUser(ctx, admin, resources.NewUser{Email: "ann@example.test",
		DisplayName: "Ann", Roles: []string{"auditor"}}); err != nil {
		t.Fatal(err)
	}
	events := func() int {
		var n int
		err := e.Store.DB().NewRaw("SELECT count(*) FROM audit_events WHERE action LIKE 'user.role_%'").
			Scan(ctx, &n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	_, err := e.Portal.RevokeRole(ctx, admin, "ann@example.test", "admin")
	var re *resources.Error
	if !errors.As(err, &re) || re.Code != resources.CodeValidationFailed || re.Field != "role" ||
		!strings.Contains(re.Detail, "ann@example.test") || !strings.Contains(re.Detail, `"admin"`) {
		t.Fatalf("revoking a role not held: %v", err)
	}
	u, err := e.Portal.GrantRole(ctx, admin, "ann@example.test", "auditor")
	if err != nil || !slices.Equal(u.Roles, []string{"auditor"}) {
		t.Fatalf("granting a role held: %v %v", u.Roles, err)
	}
	if n := events(); n != 0 {
		t.Fatalf("%d role events for changes that changed nothing", n)
	}
	if _, err := e.Portal.RevokeRole(ctx, admin, "ann@example.test", "auditor"); err != nil || events() != 1 {
		t.Fatalf("a real revoke: %v, %d events", err, events())
	}
}
