package api_test

import (
	"context"
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
