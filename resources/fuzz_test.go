package resources

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets of the parsers that take client input. The seeds run in
// every `go test`; `go test -fuzz FuzzX` explores further (CI: briefly).

func FuzzParseTokenKind(f *testing.F) {
	for _, s := range []string{"", "svc_pat_", "svc_sat_" + strings.Repeat("a", 38), "svc_pat_" + strings.Repeat("Z", 38),
		"Bearer x", "svc_pat_\x00" + strings.Repeat("0", 37), "svc_pat_ü" + strings.Repeat("0", 36)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		kind, ok := ParseTokenKind(token)
		if !ok {
			return
		}
		if kind != TokenKindPersonal && kind != TokenKindServiceAccount || len(token) != tokenLen {
			t.Fatalf("accepted %q as %q", token, kind)
		}
		for i := len(PersonalTokenPrefix); i < len(token); i++ {
			if !strings.ContainsRune(base62, rune(token[i])) {
				t.Fatalf("accepted %q with a character outside base62", token)
			}
		}
	})
}

func FuzzNormalizeEmail(f *testing.F) {
	for _, s := range []string{"Ann@Example.COM", "Ann <ann@x.example>", "bob@Bücher.example", "a\u200bb@x.example",
		"\uff41@x.example", "p\u0430ypal@x.example", "\"q r\"@x.example", "a@b", "@", "", "a@xn--bcher-kva.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizeEmail("email", in)
		if err != nil {
			if e, ok := AsError(err); !ok || e.Field != "email" {
				t.Fatalf("%q: error %v is not a field error", in, err)
			}
			return
		}
		if !utf8.ValidString(out) || len(out) > maxEmailLen || hasInvisible(out) || strings.ContainsRune(out, 0) {
			t.Fatalf("%q normalised to %q", in, out)
		}
		again, err := NormalizeEmail("email", out)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %q → %q → %q, %v", in, out, again, err)
		}
	})
}

func FuzzMergePatch(f *testing.F) {
	f.Add(`{"a":"b","c":{"d":1}}`, `{"a":null,"c":{"e":2}}`)
	f.Add(`[1,2]`, `{"a":{"bb":{"ccc":null}}}`)
	f.Add(`{"a":1}`, `null`)
	f.Add(`null`, `{"x":[null]}`)
	f.Fuzz(func(t *testing.T, targetJSON, patchJSON string) {
		var target, patch any
		if json.Unmarshal([]byte(targetJSON), &target) != nil || json.Unmarshal([]byte(patchJSON), &patch) != nil {
			return
		}
		before, _ := json.Marshal(target)
		once := MergePatch(target, patch)
		if after, _ := json.Marshal(target); string(after) != string(before) {
			t.Fatalf("the target was changed: %s → %s", before, after)
		}
		if twice := MergePatch(once, patch); !reflect.DeepEqual(once, twice) {
			t.Fatalf("not idempotent: %v then %v", once, twice)
		}
		if p, ok := patch.(map[string]any); ok {
			o := once.(map[string]any)
			for k, v := range p {
				if _, kept := o[k]; v == nil && kept {
					t.Fatalf("member %q set to null stays", k)
				}
			}
		}
	})
}
