package api_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// cachedEnv is an API whose credentials are cached for recheck, with the
// store's changes fed to it in-process as the Redis feed would.
func cachedEnv(t *testing.T, recheck time.Duration, feed bool) *apitest.Env {
	return apitest.New(t, apitest.Options{CredentialCache: recheck, NoChangeFeed: !feed})
}

func whoamiTokenID(t *testing.T, e *apitest.Env, tok string) int64 {
	t.Helper()
	r := e.Do("GET", "/api/v1/whoami", tok, nil)
	if r.Status != 200 {
		t.Fatalf("whoami: %d %s", r.Status, r.Body)
	}
	return parseInt(t, r.JSON(t)["token"].(map[string]any)["id"].(string))
}

func TestCredentialCache_RepeatedRequests_OneLookup(t *testing.T) {
	e := cachedEnv(t, time.Minute, true)
	tok := e.Token(resources.PermAIRead)
	before := e.Lookups.Count()
	for range 5 {
		if r := e.Do("GET", "/api/v1/whoami", tok, nil); r.Status != 200 {
			t.Fatalf("whoami: %d", r.Status)
		}
	}
	if n := e.Lookups.Count() - before; n != 1 {
		t.Fatalf("5 requests made %d token lookups, want 1", n)
	}
}

func TestCredentialCache_RevokedToken_RefusedAtOnce(t *testing.T) {
	e := cachedEnv(t, time.Hour, true)
	tok := e.Token(resources.PermAIRead)
	id := whoamiTokenID(t, e, tok)
	if _, err := e.Portal.RevokeToken(context.Background(), resources.Actor{Label: apitest.AdminEmail}, id); err != nil {
		t.Fatal(err)
	}
	assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil), 401, "token_revoked")
}

func TestCredentialCache_RoleRevoked_ScopesShrinkAtOnce(t *testing.T) {
	e := cachedEnv(t, time.Hour, true)
	ctx := context.Background()
	if _, err := e.Portal.CreateRole(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.Role{Name: "auditor",
		Permissions: []string{resources.PermAuditRead, resources.PermAPITokensAdmin}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Portal.CreateUser(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.NewUser{Email: "ann@example.test",
		DisplayName: "Ann", Roles: []string{"auditor"}}); err != nil {
		t.Fatal(err)
	}
	tok := e.TokenFor("ann@example.test", resources.NewToken{Name: "ann", Scopes: []string{resources.PermAuditRead}})
	if r := e.Do("GET", "/api/v1/audit-events", tok, nil); r.Status != 200 {
		t.Fatalf("with the role: %d %s", r.Status, r.Body)
	}
	if _, err := e.Portal.RevokeRole(ctx, resources.Actor{Label: apitest.AdminEmail}, "ann@example.test", "auditor"); err != nil {
		t.Fatal(err)
	}
	assertProblem(t, e.Do("GET", "/api/v1/audit-events", tok, nil), 403, "forbidden")
}

func TestCredentialCache_OwnerDeactivatedThroughAPI_RefusedAtOnce(t *testing.T) {
	e := cachedEnv(t, time.Hour, true)
	ctx := context.Background()
	u, err := e.Portal.CreateUser(ctx, resources.Actor{Label: apitest.AdminEmail}, resources.NewUser{Email: "bob@example.test",
		DisplayName: "Bob", Roles: []string{"admin"}})

	if err != nil {
		t.Fatal(err)
	}
	bob := e.TokenFor("bob@example.test", resources.NewToken{Name: "bob", Scopes: []string{resources.PermAIRead}})
	whoamiTokenID(t, e, bob)
	admin := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "hr", AllowDestroy: true,
		Scopes: []string{resources.PermUsersWrite}})
	if r := e.Do("DELETE", "/api/v1/users/"+strconv.FormatInt(u.ID, 10), admin, nil); r.Status != 204 {
		t.Fatalf("deactivate: %d %s", r.Status, r.Body)
	}
	assertProblem(t, e.Do("GET", "/api/v1/whoami", bob, nil), 401, "principal_disabled")
}

func TestCredentialCache_ExpiryCheckedOnEveryRequest(t *testing.T) {
	e := cachedEnv(t, 48*time.Hour, true)
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "short", Scopes: []string{resources.PermAIRead}, Days: 1})
	whoamiTokenID(t, e, tok)
	before := e.Lookups.Count()
	e.Clock.Advance(25 * time.Hour)
	assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil), 401, "token_expired")
	if n := e.Lookups.Count() - before; n != 0 {
		t.Fatalf("the cached credential was read again (%d lookups): expiry must be checked against it", n)
	}
}

func TestCredentialCache_ExtendedToken_NewExpiryAtOnce(t *testing.T) {
	e := cachedEnv(t, 48*time.Hour, true)
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "short", Scopes: []string{resources.PermAIRead}, Days: 1})
	id := whoamiTokenID(t, e, tok)
	if _, err := e.Portal.ExtendToken(context.Background(), resources.Actor{Label: apitest.AdminEmail}, id, 30); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(25 * time.Hour)
	if r := e.Do("GET", "/api/v1/whoami", tok, nil); r.Status != 200 {
		t.Fatalf("extended token: %d %s", r.Status, r.Body)
	}
}

// Without the feed (Redis unreachable, or an event lost), a revocation holds
// once the re-check interval has passed.
func TestCredentialCache_MissedEvent_RevocationHoldsAfterRecheck(t *testing.T) {
	e := cachedEnv(t, 30*time.Second, false)
	tok := e.Token(resources.PermAIRead)
	id := whoamiTokenID(t, e, tok)
	if _, err := e.Portal.RevokeToken(context.Background(), resources.Actor{Label: apitest.AdminEmail}, id); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(29 * time.Second)
	if r := e.Do("GET", "/api/v1/whoami", tok, nil); r.Status != 200 {
		t.Fatalf("within the interval the cached credential answers: %d", r.Status)
	}
	e.Clock.Advance(2 * time.Second)
	assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil), 401, "token_revoked")
}

func TestCredentialCache_Resync_ReadsAgain(t *testing.T) {
	e := cachedEnv(t, time.Hour, false)
	tok := e.Token(resources.PermAIRead)
	id := whoamiTokenID(t, e, tok)
	if _, err := e.Portal.RevokeToken(context.Background(), resources.Actor{Label: apitest.AdminEmail}, id); err != nil {
		t.Fatal(err)
	}
	e.Server.Resync()
	assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil), 401, "token_revoked")
}

func TestCredentialCache_APISwitchEvent_SeenAtOnce(t *testing.T) {
	e := cachedEnv(t, time.Hour, true)
	tok := e.Token(resources.PermAIRead)
	whoamiTokenID(t, e, tok)
	if _, err := e.Portal.SetAPIEnabled(context.Background(), resources.Actor{Label: apitest.AdminEmail}, false); err != nil {
		t.Fatal(err)
	}
	assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil), 404, "not_found")
}
