package bunstore_test

import (
	"testing"
	"unsafe"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

// TestCredentialByHash_KeysShareTheCatalogueText: a credential's scopes and
// its owner's permission keys are the catalogue's own strings, so the
// credentials a replica caches (thousands of one owner's tokens) do not
// each hold a copy of the owner's keys.
func TestCredentialByHash_KeysShareTheCatalogueText(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pepper := resources.Pepper("test-pepper-0123456789")
	m := bunstore.TokenMinter{Store: bunstore.NewStore(pgtest.DB(t)), Pepper: pepper}
	if _, err := m.CreateUser(ctx, resources.Actor{}, resources.NewUser{Email: "a@example.test",
		DisplayName: "A", Roles: []string{"admin"}}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		tok, err := m.CreateToken(ctx, resources.Actor{Label: "a@example.test"},
			resources.NewToken{Name: "t", Scopes: []string{resources.PermAIRead}, Days: 1})
		if err != nil {
			t.Fatal(err)
		}
		cred, err := m.Store.CredentialByHash(ctx, pepper.Hash(tok.Value))
		if err != nil {
			t.Fatal(err)
		}
		keys := append(cred.Token.Scopes, cred.Owner.Permissions...)
		if len(keys) < 2 {
			t.Fatalf("keys = %q, want the scope and the admin's permissions", keys)
		}
		for _, k := range keys {
			if !sameText(k, resources.CanonicalKeys([]string{k})[0]) {
				t.Errorf("key %q is a copy, not the catalogue's string", k)
			}
		}
	}
}

func sameText(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
