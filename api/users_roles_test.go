package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// TestUsers_PortalRoleGrantAndRevoke_MoveUpdatedAt: a role given or taken
// in the portal changes the person, so their updated_at moves (as a PATCH
// of their roles moves it), in the API and in the audit row's after_state.
func TestUsers_PortalRoleGrantAndRevoke_MoveUpdatedAt(t *testing.T) {
	e, tok := userEnv(t)
	ctx := context.Background()
	admin := resources.Actor{Label: apitest.AdminEmail}
	u := invite(t, e, tok, "ann@example.test")
	last := u["updated_at"].(string)
	for _, step := range []struct {
		action string
		change func() error
	}{
		{"user.role_grant", func() error { _, err := e.Portal.GrantRole(ctx, admin, "ann@example.test", "auditor"); return err }},
		{"user.role_revoke", func() error { _, err := e.Portal.RevokeRole(ctx, admin, "ann@example.test", "auditor"); return err }},
	} {
		if err := step.change(); err != nil {
			t.Fatal(err)
		}
		now := e.Do("GET", "/api/v1/users/"+u["id"].(string), tok, nil).JSON(t)["updated_at"].(string)
		ev := e.Do("GET", "/api/v1/audit-events?action="+step.action, tok, nil).JSON(t)["items"].([]any)[0]
		after := ev.(map[string]any)["after_state"].(map[string]any)["updated_at"]
		if !parseTime(t, now).After(parseTime(t, last)) || after != now {
			t.Fatalf("%s: updated_at %s (before %s), audit after_state %v", step.action, now, last, after)
		}
		last = now
	}
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUsers_PortalRoleGrant_DeactivatedPerson_409UserDeactivated: a
// deactivated person cannot be changed by PATCH (409 user_deactivated), nor
// through the portal's role grant and revoke; nothing is written.
func TestUsers_PortalRoleGrant_DeactivatedPerson_409UserDeactivated(t *testing.T) {
	e, tok := userEnv(t)
	ctx := context.Background()
	admin := resources.Actor{Label: apitest.AdminEmail}
	u := invite(t, e, tok, "ann@example.test", "auditor")
	if r := e.Do("DELETE", "/api/v1/users/"+u["id"].(string), tok, nil); r.Status != 204 {
		t.Fatalf("deactivate: %d %s", r.Status, r.Body)
	}
	_, grant := e.Portal.GrantRole(ctx, admin, "ann@example.test", "releaser")
	_, revoke := e.Portal.RevokeRole(ctx, admin, "ann@example.test", "auditor")
	for name, err := range map[string]error{"grant": grant, "revoke": revoke} {
		if re, ok := resources.AsError(err); !ok || re.Code != resources.CodeUserDeactivated {
			t.Errorf("%s: %v, want user_deactivated", name, err)
		}
	}
	roles := e.Do("GET", "/api/v1/users/"+u["id"].(string), tok, nil).JSON(t)["roles"]
	if d := cmp.Diff([]any{"auditor"}, roles); d != "" {
		t.Fatalf("roles (-want +got):\n%s", d)
	}
}
