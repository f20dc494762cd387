package api_test

import (
	"context"
	"testing"
	"time"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
)

// lockOut spends the failed authentications of the test client's address
// with a well-formed token nobody minted, until it is refused (429).
func lockOut(t *testing.T, e *apitest.Env) (unknown string) {
	t.Helper()
	unknown = resources.NewTokenValue(resources.TokenKindPersonal)
	for i := 0; e.Do("GET", "/api/v1/meta", unknown, nil).Status != 429; i++ {
		if i > api.AuthFailuresPerMinute {
			t.Fatal("the address is not refused after its failed authentications")
		}
	}
	return unknown
}

// mint creates a token as the admin and returns its id and value.
func mint(t *testing.T, e *apitest.Env, name string) (int64, string) {
	t.Helper()
	m, err := e.Portal.CreateToken(context.Background(), resources.Actor{Label: apitest.AdminEmail},
		resources.NewToken{Name: name, Scopes: []string{resources.PermAIRead}, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	return m.Token.ID, m.Value
}

// TestAuthFailures_RefusedAddress_NoLiveTokenRefusedOthersWithoutLookup
// (issue 18, R1): from an address that spent its failed authentications,
// every live token is served — one minted after the lockout and never
// used, one idle for longer than any cache keeps it — while a revoked
// token and unknown ones are refused 429 without a token lookup.
func TestAuthFailures_RefusedAddress_NoLiveTokenRefusedOthersWithoutLookup(t *testing.T) {
	e := apitest.New(t, apitest.Options{CredentialCache: 30 * time.Second})
	_, idle := mint(t, e, "idle")
	revokedID, revoked := mint(t, e, "revoked")
	for _, tok := range []string{idle, revoked} {
		if r := e.Do("GET", "/api/v1/meta", tok, nil); r.Status != 200 {
			t.Fatalf("first use: %d %s", r.Status, r.Body)
		}
	}
	if _, err := e.Portal.RevokeToken(context.Background(), resources.Actor{Label: apitest.AdminEmail},
		revokedID); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour) // no cache, no memory of a use, holds the idle token now
	unknown := lockOut(t, e)
	_, fresh := mint(t, e, "minted after the lockout")
	for name, tok := range map[string]string{"idle": idle, "fresh": fresh} {
		before := e.Lookups.Count()
		if r := e.Do("GET", "/api/v1/meta", tok, nil); r.Status != 200 || e.Lookups.Count() != before+1 {
			t.Errorf("%s token from the refused address: %d %s (%d lookups)", name, r.Status, r.Body,
				e.Lookups.Count()-before)
		}
	}
	before := e.Lookups.Count()
	for name, tok := range map[string]string{"revoked": revoked, "unknown": unknown,
		"another unknown": resources.NewTokenValue(resources.TokenKindPersonal)} {
		assertProblem(t, e.Do("GET", "/api/v1/meta", tok, nil), 429, "rate_limited")
		if e.Lookups.Count() != before {
			t.Fatalf("the %s token from the refused address was looked up", name)
		}
	}
}
