package resources

import (
	"strings"
	"testing"
)

func TestNormalizeEmail_LookAlikesAndInvisiblesRefused(t *testing.T) {
	for name, in := range map[string]string{
		"zero-width space":        "ad\u200bmin@example.com",
		"zero-width joiner":       "ad\u200dmin@example.com",
		"soft hyphen":             "ad\u00admin@example.com",
		"right-to-left override":  "\u202enimda@example.com",
		"left-to-right isolate":   "admin\u2066@example.com",
		"byte order mark":         "\ufeffadmin@example.com",
		"invisible in the domain": "admin@exa\u200bmple.com",
		"fullwidth local part":    "\uff41dmin@example.com",
		"Cyrillic a among Latin":  "p\u0430ypal@example.com",
		"Greek omicron in Latin":  "hell\u03bf@example.com",
		"control character":       "ad\x01min@example.com",
		"variation selector":      "admin\ufe0f@example.com",
		"mathematical letters":    "\U0001d41a\U0001d41d\U0001d426\U0001d422\U0001d427@example.com",
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := NormalizeEmail("email", in); err == nil {
				t.Fatalf("%q accepted as %q", in, got)
			} else if e, _ := AsError(err); e == nil || e.Field != "email" || e.Kind != KindInvalid {
				t.Fatalf("error %v", err)
			}
		})
	}
}

func TestNormalizeEmail_OneScriptAndItsWritingSystemAccepted(t *testing.T) {
	for in, want := range map[string]string{
		"\u0430\u0434\u043c\u0438\u043d@example.com": "\u0430\u0434\u043c\u0438\u043d@example.com", // all Cyrillic
		"josé.müller@Example.com":                    "josé.müller@example.com",
		"山田たろう@example.jp":                           "山田たろう@example.jp", // Han + Hiragana
		"first.last+tag@example.com":                 "first.last+tag@example.com",
		"o'brien_1@example.com":                      "o'brien_1@example.com",
	} {
		if got, err := NormalizeEmail("email", in); err != nil || got != want {
			t.Errorf("%q → %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestNormalizeEmail_OverlongLocalPartOrDomainLabel_Refused: "primary_contact_email
// string (email)": RFC 5321 §4.5.3.1 bounds a local part to 64 octets and
// RFC 1035 a domain label to 63, so such an address can never be delivered.
func TestNormalizeEmail_OverlongLocalPartOrDomainLabel_Refused(t *testing.T) {
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	for name, in := range map[string]string{
		"local part of 65 octets":         long("j", 65) + "@example.com",
		"local part of 65 octets (UTF-8)": long("é", 33) + "@example.com",
		"domain label of 64 characters":   "jane@" + long("a", 64) + ".example",
		"label of 64 after punycode":      "jane@bücher" + long("a", 60) + ".example",
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := NormalizeEmail("email", in); err == nil {
				t.Fatalf("%q accepted as %q", in, got)
			} else if e, _ := AsError(err); e == nil || e.Field != "email" || e.Kind != KindInvalid {
				t.Fatalf("error %v", err)
			}
		})
	}
	for _, in := range []string{long("j", 64) + "@example.com", "jane@" + long("a", 63) + ".example"} {
		if _, err := NormalizeEmail("email", in); err != nil {
			t.Errorf("%q at the limit refused: %v", in, err)
		}
	}
}
