package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// A role change that changes nothing succeeds and says so (Changed false),
// writing no audit row, as PATCH /users with the same role set does: giving
// a role the person holds, taking away one they do not hold. A role that
// does not exist is refused either way (422 role_not_found, naming it).
func TestUsers_RoleChangesThatChangeNothing_NoOpWithoutAuditRow(t *testing.T) {
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
	type changeFunc = func(context.Context, resources.Actor, string, string) (resources.RoleChange, error)
	type result struct {
		Roles   []string
		Changed bool
	}
	steps := []struct {
		name   string
		change changeFunc
		role   string
		want   result
		events int
	}{
		{"take a role not held", e.Portal.RevokeRole, "admin", result{[]string{"auditor"}, false}, 0},
		{"give a role held", e.Portal.GrantRole, "auditor", result{[]string{"auditor"}, false}, 0},
		{"take a role held", e.Portal.RevokeRole, "auditor", result{[]string{}, true}, 1},
		{"take it again", e.Portal.RevokeRole, "auditor", result{[]string{}, false}, 1},
	}
	for _, s := range steps {
		rc, err := s.change(ctx, admin, "ann@example.test", s.role)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if diff := cmp.Diff(s.want, result{rc.Roles, rc.Changed}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
		if n := events(); n != s.events {
			t.Errorf("%s: %d role events, want %d", s.name, n, s.events)
		}
	}
	for _, change := range []changeFunc{e.Portal.GrantRole, e.Portal.RevokeRole} {
		_, err := change(ctx, admin, "ann@example.test", "audtor")
		var re *resources.Error
		if !errors.As(err, &re) || re.Code != resources.CodeRoleNotFound ||
			!strings.Contains(re.Detail, `"audtor"`) {
			t.Errorf("a role that does not exist: %v", err)
		}
	}
}
