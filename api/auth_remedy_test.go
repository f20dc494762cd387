package api_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// TestAuth_Forbidden_OwnerLacksTheKey_RemedyNamesTheOwnerNotANewToken: when
// the token's owner holds none of the keys, a new token cannot help (a token
// never does more than its owner), so the remedy says what can: a role for
// the person, or a service account that holds a key.
func TestAuth_Forbidden_OwnerLacksTheKey_RemedyNamesTheOwnerNotANewToken(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	admin := resources.Actor{Label: apitest.AdminEmail}
	if _, err := e.Portal.CreateRole(ctx, admin, resources.Role{Name: "minter",
		Permissions: []string{resources.PermAPITokensAdmin, resources.PermAIRead}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Portal.CreateUser(ctx, admin, resources.NewUser{Email: "ann@example.test",
		DisplayName: "Ann", Roles: []string{"minter"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Portal.CreateServiceAccount(ctx, admin, resources.NewServiceAccount{Name: "ci-bot",
		Permissions: []string{resources.PermAIRead}}); err != nil {
		t.Fatal(err)
	}
	ann := e.TokenFor("ann@example.test", resources.NewToken{Name: "ann", Scopes: []string{resources.PermAIRead}})
	bot := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "bot", Scopes: []string{resources.PermAIRead},
		ServiceAccount: "ci-bot"})
	got := map[string]any{}
	for name, tok := range map[string]string{"person": ann, "service account": bot} {
		got[name] = assertProblem(t, e.Do("GET", "/api/v1/audit-events", tok, nil), 403, "forbidden")["remedy"]
	}
	want := map[string]any{
		"person": "The token's owner (ann@example.test) holds none of these keys, so no token of theirs can " +
			"carry one: ask an administrator to give them a role with audit-read-global, then mint " +
			"a token with it in the portal.",
		"service account": "The token's owner (service account ci-bot) holds none of these keys, and its " +
			"tokens carry no more than it holds: use a service account created with audit-read-global.",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("remedies (-want +got):\n%s", d)
	}
}

// TestAuth_401_RemedySaysWhatToDo: every 401 refusal of a presented token
// carries a remedy saying what the caller does next, and the address refusal
// names the address the server saw.
func TestAuth_401_RemedySaysWhatToDo(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	admin := resources.Actor{Label: apitest.AdminEmail}
	far := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "far", Scopes: []string{resources.PermAIRead},
		AllowedIPs: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	revoked := e.Token(resources.PermAIRead)
	id := e.Do("GET", "/api/v1/whoami", revoked, nil).JSON(t)["token"].(map[string]any)["id"].(string)
	if _, err := e.Portal.RevokeToken(ctx, admin, parseInt(t, id)); err != nil {
		t.Fatal(err)
	}
	short := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "short", Scopes: []string{resources.PermAIRead}, Days: 1})
	gone := disabledPersonToken(t, e)
	e.Clock.Advance(25 * time.Hour)
	got := map[string]any{}
	for code, tok := range map[string]string{"token_invalid": "svc_pat_short", "token_revoked": revoked,
		"token_expired": short, "token_ip_not_allowed": far, "principal_disabled": gone} {
		m := assertProblem(t, e.Do("GET", "/api/v1/whoami", tok, nil), 401, code)
		got[code] = []any{m["detail"], m["remedy"]}
	}
	mint := "a person with api-tokens-admin-global mints a new token in the portal (API tokens)."
	want := map[string]any{
		"token_invalid": []any{"the token is malformed or fails its checksum",
			"Send the value exactly as the portal showed it (svc_pat_… or svc_sat_…); if it is lost, " + mint},
		"token_revoked": []any{"the token was revoked", "Revocation is final: " + mint},
		"token_expired": []any{"the token expired at " + e.Clock.Now().Add(-time.Hour).UTC().Format(time.RFC3339),
			"A person with api-tokens-admin-global extends it or mints a new one in the portal (API tokens)."},
		"principal_disabled": []any{"the token's owner (ann@example.test) is deactivated",
			"Its tokens stop with it: use a token of an active person or service account."},
		"token_ip_not_allowed": []any{"the token may not be used from address 127.0.0.1",
			"Call from one of the token's allowed networks, or ask for a token that allows this address " +
				"(behind a proxy, the server's --trusted-proxies decides which address it sees)."},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("401 detail and remedy (-want +got):\n%s", d)
	}
}

// disabledPersonToken mints a token for a new person and deactivates them.
func disabledPersonToken(t *testing.T, e *apitest.Env) string {
	t.Helper()
	ctx := context.Background()
	admin := resources.Actor{Label: apitest.AdminEmail}
	if _, err := e.Portal.CreateRole(ctx, admin, resources.Role{Name: "minter",
		Permissions: []string{resources.PermAPITokensAdmin, resources.PermAIRead}}); err != nil {
		t.Fatal(err)
	}
	u, err := e.Portal.CreateUser(ctx, admin, resources.NewUser{Email: "ann@example.test",
		DisplayName: "Ann", Roles: []string{"minter"}})
	if err != nil {
		t.Fatal(err)
	}
	tok := e.TokenFor("ann@example.test", resources.NewToken{Name: "ann", Scopes: []string{resources.PermAIRead}})
	if err := e.Store.DeactivateUser(ctx, admin, u.ID); err != nil {
		t.Fatal(err)
	}
	return tok
}
