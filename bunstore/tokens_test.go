package bunstore_test

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"
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
	catalogue := map[string]string{} // the catalogue's own strings, not through CanonicalKeys
	for _, p := range resources.Permissions() {
		catalogue[p.Key] = p.Key
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
		keys := slices.Concat(cred.Token.Scopes, cred.Owner.Permissions)
		if len(keys) < 2 {
			t.Fatalf("keys = %q, want the scope and the admin's permissions", keys)
		}
		for _, k := range keys {
			if c, ok := catalogue[k]; !ok || !sameText(k, c) {
				t.Errorf("key %q is a copy, not the catalogue's string", k)
			}
		}
	}
}

func sameText(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// TestLiveTokens_AgreeWithCredentialCheck: the view of live tokens (its
// full load and its one-token re-read) holds exactly the tokens that
// Credential.Check does not refuse as revoked or expired, at the store's
// clock, at the second of expiry too. The SQL restates that rule; this
// keeps the two the same.
func TestLiveTokens_AgreeWithCredentialCheck(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := pgtest.DB(t)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	st := bunstore.NewStore(db)
	st.SetClock(func() time.Time { return now })
	pepper := resources.Pepper("test-pepper-0123456789")
	m := bunstore.TokenMinter{Store: st, Pepper: pepper}
	by := resources.Actor{Label: "a@example.test"}
	if _, err := m.CreateUser(ctx, resources.Actor{}, resources.NewUser{Email: by.Label,
		DisplayName: "A", Roles: []string{"admin"}}); err != nil {
		t.Fatal(err)
	}
	expiries := map[string]time.Time{"live": now.Add(time.Hour), "expires now": now,
		"a microsecond left": now.Add(time.Microsecond), "expired": now.Add(-time.Hour), "revoked": now.Add(time.Hour)}
	hashes := map[string][]byte{}
	for name, exp := range expiries {
		tok, err := m.CreateToken(ctx, by, resources.NewToken{Name: name, Scopes: []string{resources.PermAIRead}, Days: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "UPDATE api_tokens SET expires_at = ? WHERE id = ?", exp, tok.Token.ID); err != nil {
			t.Fatal(err)
		}
		if name == "revoked" {
			if _, err := m.RevokeToken(ctx, by, tok.Token.ID); err != nil {
				t.Fatal(err)
			}
		}
		hashes[name] = pepper.Hash(tok.Value)
	}
	inView := map[string]bool{}
	if err := st.EachLiveTokenHash(ctx, func(h []byte) { inView[string(h)] = true }); err != nil {
		t.Fatal(err)
	}
	for name, hash := range hashes {
		cred, err := st.CredentialByHash(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		var refused *resources.Error
		checkErr := cred.Check(now, netip.Addr{})
		live := !errors.As(checkErr, &refused) ||
			(refused.Code != resources.CodeTokenRevoked && refused.Code != resources.CodeTokenExpired)
		_, reread, err := st.TokenHash(ctx, cred.Token.ID)
		if err != nil {
			t.Fatal(err)
		}
		if inView[string(hash)] != live || reread != live {
			t.Errorf("%s: in the view %v, re-read live %v; Check says %v", name, inView[string(hash)], reread, checkErr)
		}
	}
}
