package resources

import (
	"github.com/google/go-cmp/cmp"

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

// TestAuditState_OnePassUnlessAMemberNameLooksSecret: an entity naming no
// secret-looking member is kept exactly as encoded (numbers too); one that
// does, at any depth, in any form (a struct field, a map key, a name inside
// a JSON value, a name written with an escape), is redacted as the full
// decode-and-redact would.
func TestAuditState_OnePassUnlessAMemberNameLooksSecret(t *testing.T) {
	type inner struct {
		Tags  []string        `json:"tags"`
		Extra json.RawMessage `json:"extra"`
	}
	type row struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Inner inner  `json:"inner"`
	}
	plain := row{ID: 12345678901234567, Name: `say "token": ok`, Inner: inner{Tags: []string{"api_key"},
		Extra: json.RawMessage(`{"note": "a \\" , "n": 1}`)}}
	tests := []struct {
		name   string
		entity any
		kept   bool // kept as encoded
	}{
		{"secret-looking words only in values", plain, true},
		{"struct field", struct {
			TokenHash string `json:"token_hash"`
		}{"h"}, false},
		{"map key at depth", map[string]any{"a": []any{map[string]any{"Client_Secret": "s"}}}, false},
		{"inside a JSON value", row{Inner: inner{Extra: json.RawMessage(`{"password": "p"}`)}}, false},
		{"escaped name", row{Inner: inner{Extra: json.RawMessage(`{"\u0074oken": "t"}`)}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AuditState(tt.entity)
			if err != nil {
				t.Fatal(err)
			}
			encoded, _ := json.Marshal(tt.entity)
			if kept := string(got) == string(encoded); kept != tt.kept {
				t.Fatalf("kept as encoded: %v, want %v: %s", kept, tt.kept, got)
			}
			var v any
			_ = json.Unmarshal(encoded, &v)
			want, _ := json.Marshal(redact(v))
			if d := cmp.Diff(decodeJSON(t, want), decodeJSON(t, got)); !tt.kept && d != "" {
				t.Fatalf("not as the full redaction (-want +got):\n%s", d)
			}
			if !tt.kept && cmp.Equal(decodeJSON(t, want), decodeJSON(t, encoded)) {
				t.Fatalf("the case redacts nothing: %s", encoded)
			}
		})
	}
}

func decodeJSON(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return v
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
