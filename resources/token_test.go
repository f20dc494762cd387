package resources

import (
	"strings"
	"testing"
	"time"
)

func TestToken_NewValueHasPrefixLengthAndValidChecksum(t *testing.T) {
	for kind, prefix := range map[string]string{TokenKindPersonal: "svc_pat_", TokenKindServiceAccount: "svc_sat_"} {
		v := NewTokenValue(kind)
		if !strings.HasPrefix(v, prefix) || len(v) != len(prefix)+32+6 {
			t.Fatalf("%s: %q", kind, v)
		}
		if got, ok := ParseTokenKind(v); !ok || got != kind {
			t.Fatalf("%s: parse %q %v", kind, got, ok)
		}
	}
	if first, second := NewTokenValue(TokenKindPersonal), NewTokenValue(TokenKindPersonal); first == second {
		t.Fatal("two tokens are equal")
	}
}

func TestToken_AnySingleCharacterTypoIsRejected(t *testing.T) {
	v := NewTokenValue(TokenKindPersonal)
	for i := len(PersonalTokenPrefix); i < len(v); i++ {
		for _, c := range []byte{'0', 'Z', 'z'} {
			if v[i] == c {
				continue
			}
			typo := v[:i] + string(c) + v[i+1:]
			if _, ok := ParseTokenKind(typo); ok {
				t.Fatalf("typo at %d accepted: %s", i, typo)
			}
		}
	}
	for _, bad := range []string{"", "svc_pat_", v + "x", "svc_xyz_" + v[8:], strings.Replace(v, v[10:11], "!", 1)} {
		if _, ok := ParseTokenKind(bad); ok {
			t.Fatalf("accepted %q", bad)
		}
	}
}

func TestPepper_HashIsKeyed(t *testing.T) {
	a, b := Pepper("pepper-one-0123456789"), Pepper("pepper-two-0123456789")
	once, again := a.Hash("x"), a.Hash("x")
	if string(once) == string(b.Hash("x")) || string(once) != string(again) {
		t.Fatal("hash must depend on the pepper and be stable")
	}
	if Pepper("short").Configured() || Pepper(nil).Configured() || !a.Configured() {
		t.Fatal("Configured needs at least 16 bytes")
	}
}

func TestTokenDays_1To365(t *testing.T) {
	for _, d := range []int{0, -1, 366} {
		if ValidateTokenDays(d) == nil {
			t.Fatalf("%d days accepted", d)
		}
	}
	for _, d := range []int{1, 90, 365} {
		if ValidateTokenDays(d) != nil {
			t.Fatalf("%d days refused", d)
		}
	}
}

func TestAPIToken_StatusAndExpiryWarnings(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tok := APIToken{ExpiresAt: now.Add(10 * 24 * time.Hour)}
	if tok.Status(now) != TokenActive || tok.ExpiryWarning(now) != "14d" {
		t.Fatalf("10 days left: %s %s", tok.Status(now), tok.ExpiryWarning(now))
	}
	if tok.ExpiryWarning(now.Add(8*24*time.Hour)) != "3d" || tok.ExpiryWarning(now.Add(-5*24*time.Hour)) != "" {
		t.Fatal("3d window / no warning far out")
	}
	if tok.Status(tok.ExpiresAt) != TokenExpired {
		t.Fatal("expired at its expiry instant")
	}
	at := now
	tok.RevokedAt = &at
	if tok.Status(now) != TokenRevoked {
		t.Fatal("revoked wins")
	}
}

// TestCredential_Holds_SameAsHasAnyOfEffectiveScopes: the check every
// request makes answers as the rule it stands for (HasAny over the token's
// scopes intersected with its owner's permissions), in every case.
func TestCredential_Holds_SameAsHasAnyOfEffectiveScopes(t *testing.T) {
	tests := []struct {
		name          string
		scopes, perms []string
		keys          []string
		want          bool
	}{
		{"no keys asked", nil, nil, nil, true},
		{"token and owner hold it", []string{"a", "b"}, []string{"b"}, []string{"b"}, true},
		{"one of several", []string{"a", "c"}, []string{"a", "c"}, []string{"x", "c"}, true},
		{"the owner lost it", []string{"a"}, []string{"b"}, []string{"a"}, false},
		{"the token lacks it", []string{"b"}, []string{"a", "b"}, []string{"a"}, false},
		{"each holds a different key", []string{"a"}, []string{"b"}, []string{"a", "b"}, false},
		{"nothing held", nil, nil, []string{"a"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Credential{Token: APIToken{Scopes: tt.scopes}, Owner: Principal{Permissions: tt.perms}}
			rule := HasAny(c.EffectiveScopes(), tt.keys)
			if got := c.Holds(tt.keys...); got != tt.want || rule != tt.want {
				t.Fatalf("Holds = %v, HasAny(EffectiveScopes) = %v, want %v", got, rule, tt.want)
			}
		})
	}
}
