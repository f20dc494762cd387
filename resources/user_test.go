package resources

import (
	"strings"
	"testing"
)

func TestCheckRoleGrant_RequiresEveryKeyOfEveryRoleListsTheMissingSorted(t *testing.T) {
	held := []string{PermUsersWrite, PermAuditRead}
	auditor := Role{Name: "auditor", Permissions: []string{PermAuditRead}}
	ops := Role{Name: "ops", Permissions: []string{PermReleasesWrite, PermAuditRead, PermAIWrite}}
	empty := Role{Name: "empty"}
	if err := CheckRoleGrant(held, []Role{auditor, empty}); err != nil {
		t.Fatalf("held keys: %v", err)
	}
	if err := CheckRoleGrant(nil, nil); err != nil {
		t.Fatalf("no roles: %v", err)
	}
	e, _ := AsError(CheckRoleGrant(held, []Role{auditor, ops, {Name: "more", Permissions: []string{PermAIWrite, PermAdmin}}}))
	if e == nil || e.Kind != KindForbidden || e.Code != CodeRoleNotGrantable || e.Required != nil ||
		!strings.HasSuffix(e.Detail, "it lacks admin, ai-write-global, releases-write-global") {
		t.Fatalf("missing keys: %+v", e)
	}
	if e, _ := AsError(CheckRoleGrant(nil, []Role{auditor})); e == nil ||
		!strings.HasSuffix(e.Detail, "it lacks "+PermAuditRead) {
		t.Fatalf("a caller holding nothing gives nothing: %+v", e)
	}
}

func TestNewInvite_NormalisesAndChecksBounds(t *testing.T) {
	n, err := NewInvite(NewUser{Email: " Ann <Ann@EXAMPLE.test>", DisplayName: "Ann", Roles: []string{"b", "a"}})
	if err != nil || n.Email != "Ann@example.test" || strings.Join(n.Roles, ",") != "a,b" {
		t.Fatalf("%+v %v", n, err)
	}
	if n, _ := NewInvite(NewUser{Email: "a@b.test", DisplayName: "A"}); n.Roles == nil {
		t.Fatal("no roles must be an empty set, not nil")
	}
	many := make([]string, MaxUserRoles+1)
	for i := range many {
		many[i] = strings.Repeat("r", i+1)
	}
	for name, u := range map[string]NewUser{
		"email": {Email: "nope", DisplayName: "A"}, "empty name": {Email: "a@b.test"},
		"long name": {Email: "a@b.test", DisplayName: strings.Repeat("é", MaxDisplayNameLen+1)},
		"repeat":    {Email: "a@b.test", DisplayName: "A", Roles: []string{"x", "x"}},
		"too many":  {Email: "a@b.test", DisplayName: "A", Roles: many},
	} {
		if e, _ := AsError(func() error { _, err := NewInvite(u); return err }()); e == nil || e.Kind != KindInvalid {
			t.Errorf("%s accepted: %v", name, e)
		}
	}
}

func TestUserApply_DeactivatedRefusedRolesReplacedSorted(t *testing.T) {
	u := User{ID: 3, DisplayName: "Ann", Roles: []string{"a"}, Status: UserActive}
	got, err := u.Apply(UserPatch{Roles: Patch[[]string]{Set: true, Value: []string{"c", "b"}}})
	if err != nil || strings.Join(got.Roles, ",") != "b,c" || got.DisplayName != "Ann" || strings.Join(u.Roles, ",") != "a" {
		t.Fatalf("%+v %v", got, err)
	}
	if strings.Join(AddedRoles(u.Roles, got.Roles), ",") != "b,c" || len(AddedRoles(got.Roles, []string{"b"})) != 0 {
		t.Fatal("added roles")
	}
	if _, err := u.Apply(UserPatch{DisplayName: Patch[string]{Set: true}}); err == nil {
		t.Fatal("empty display name accepted")
	}
	u.Status = UserDeactivated
	if e, _ := AsError(func() error { _, err := u.Apply(UserPatch{}); return err }()); e == nil || e.Code != CodeUserDeactivated {
		t.Fatalf("deactivated: %v", e)
	}
}

func TestCheckDeactivate_SelfRefusedAgainIsNoChange(t *testing.T) {
	id := int64(3)
	u := User{ID: 3, Status: UserActive}
	if _, err := CheckDeactivate(Actor{UserID: &id}, u); err == nil {
		t.Fatal("self-deactivation accepted")
	}
	if change, err := CheckDeactivate(Actor{Label: "service-account:bot"}, u); !change || err != nil {
		t.Fatalf("%v %v", change, err)
	}
	u.Status = UserDeactivated
	if change, err := CheckDeactivate(Actor{}, u); change || err != nil {
		t.Fatalf("again: %v %v", change, err)
	}
}
