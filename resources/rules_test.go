package resources

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckMint_RefusesForbiddenUnheldAndOutOfRange(t *testing.T) {
	minter := Principal{Kind: PrincipalUser, Active: true, Permissions: []string{PermAdmin, PermAPITokensAdmin, PermAIRead}}
	ok := NewToken{Name: "n", Scopes: []string{PermAIRead}, Days: 90}
	if err := CheckMint(minter, minter, ok); err != nil {
		t.Fatal(err)
	}
	cases := map[string]NewToken{
		"admin":     {Name: "n", Scopes: []string{PermAdmin}, Days: 90},
		"unheld":    {Name: "n", Scopes: []string{PermAuditRead}, Days: 90},
		"days 0":    {Name: "n", Scopes: []string{PermAIRead}, Days: 0},
		"days 366":  {Name: "n", Scopes: []string{PermAIRead}, Days: 366},
		"no scopes": {Name: "n", Days: 90},
		"no name":   {Scopes: []string{PermAIRead}, Days: 90},
	}
	for name, tc := range cases {
		if err := CheckMint(minter, minter, tc); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	noAdmin := minter
	noAdmin.Permissions = []string{PermAIRead}
	if e, _ := AsError(CheckMint(noAdmin, noAdmin, ok)); e == nil || e.Code != CodeForbidden || e.Required[0] != PermAPITokensAdmin {
		t.Fatalf("minter without api-tokens-admin-global: %v", e)
	}
	account := Principal{Kind: PrincipalServiceAccount, Active: true, Permissions: []string{PermProjectsRead}}
	if CheckMint(minter, account, ok) == nil {
		t.Fatal("a token must not carry more than its service account holds")
	}
}

func TestAuditState_NullsSecretLookingMembersAtAnyDepth(t *testing.T) {
	raw, err := AuditState(map[string]any{
		"name": "x", "token_hash": "abc", "Password": "p",
		"nested": map[string]any{"client_secret": "s", "list": []any{map[string]any{"api_key": "k", "ok": 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	n := m["nested"].(map[string]any)
	item := n["list"].([]any)[0].(map[string]any)
	if m["name"] != "x" || m["token_hash"] != nil || m["Password"] != nil || n["client_secret"] != nil || item["api_key"] != nil || item["ok"] != 1.0 {
		t.Fatalf("redacted: %s", raw)
	}
	for _, k := range []string{"token_hash", "Password", "client_secret", "api_key"} {
		if !strings.Contains(string(raw), `"`+k+`":null`) {
			t.Fatalf("%s must stay present as null: %s", k, raw)
		}
	}
	if got, _ := AuditState(nil); got != nil {
		t.Fatal("nil entity is SQL NULL")
	}
}

func TestNormalizeEmail_DomainLowerPunycodeLocalKept(t *testing.T) {
	cases := map[string]string{
		"  Ann.Smith@Example.COM ":    "Ann.Smith@example.com",
		"Ann Smith <Ann@Example.com>": "Ann@example.com",
		"bob@Bücher.example":          "bob@xn--bcher-kva.example",
		"\"Quoted\" <q@EXAMPLE.org>":  "q@example.org",
	}
	for in, want := range cases {
		got, err := NormalizeEmail("email", in)
		if err != nil || got != want {
			t.Errorf("%q → %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "no-at", "a@", "@b.c", "a@localhost", "two@@x.y"} {
		if _, err := NormalizeEmail("email", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestIntersect_SortedUnique(t *testing.T) {
	got := Intersect([]string{"c", "a", "b", "a"}, []string{"a", "c"})
	if strings.Join(got, ",") != "a,c" {
		t.Fatalf("%v", got)
	}
	if !HasAny([]string{"x"}, nil) || HasAny(nil, []string{"x"}) {
		t.Fatal("HasAny: empty wanted is satisfied; nothing held satisfies nothing")
	}
}
