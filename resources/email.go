package resources

import (
	"net/mail"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/idna"
	"golang.org/x/text/secure/precis"
)

// Bounds of an address (RFC 5321 §4.5.3.1), of its local part in octets
// and of a domain label (RFC 1035); beyond them no mail is delivered.
const (
	maxEmailLen = 254
	maxLocalLen = 64
	maxLabelLen = 63
)

// NormalizeEmail returns the canonical stored form of an e-mail address:
// surrounding whitespace dropped, a "Name <address>" form reduced to the
// address, the domain lower-cased and converted to its ASCII (punycode)
// form, the local part kept as written. It refuses an address that could
// pass for another person's: invisible, control or bidi control characters
// anywhere; a local part that PRECIS (RFC 8265, UsernameCasePreserved)
// refuses or would change (fullwidth forms, unnormalised text, symbols);
// and a local part mixing scripts beyond what one writing system uses
// (UTS 39 "highly restrictive", so "pаypal" with a Cyrillic а is refused).
// field names the member on error.
func NormalizeEmail(field, in string) (string, error) {
	s := strings.TrimSpace(in)
	if hasInvisible(s) {
		return "", Invalid(field, CodeValidationFailed, "%s holds an invisible, control or bidi control character", field)
	}
	addr, err := mail.ParseAddress(s)
	if err != nil {
		return "", Invalid(field, CodeValidationFailed, "%s is not an e-mail address", field)
	}
	at := strings.LastIndexByte(addr.Address, '@')
	if at <= 0 || at == len(addr.Address)-1 {
		return "", Invalid(field, CodeValidationFailed, "%s is not an e-mail address", field)
	}
	if err := checkLocalPart(field, addr.Address[:at]); err != nil {
		return "", err
	}
	if at > maxLocalLen {
		return "", Invalid(field, CodeValidationFailed,
			"%s has a local part longer than %d octets", field, maxLocalLen)
	}
	domain, ok := asciiDomain(addr.Address[at+1:])
	if !ok {
		return "", Invalid(field, CodeValidationFailed, "%s has an invalid domain", field)
	}
	out := addr.Address[:at+1] + strings.ToLower(domain)
	if len(out) > maxEmailLen {
		return "", Invalid(field, CodeValidationFailed, "%s is longer than %d characters", field, maxEmailLen)
	}
	return out, nil
}

// asciiDomain is the lower-cased ASCII (punycode) form of a domain of at
// least two non-empty labels of at most 63 characters, stable when
// converted again.
func asciiDomain(d string) (string, bool) {
	out, err := idna.Lookup.ToASCII(strings.ToLower(d))
	if err != nil || !strings.Contains(out, ".") || strings.HasPrefix(out, ".") || strings.HasSuffix(out, ".") ||
		strings.Contains(out, "..") {
		return "", false
	}
	for label := range strings.SplitSeq(out, ".") {
		if len(label) > maxLabelLen {
			return "", false
		}
	}
	again, err := idna.Lookup.ToASCII(out)
	return out, err == nil && again == out
}

// hasInvisible reports a control or format character (zero-width
// characters, bidi controls and isolates, soft hyphen, BOM) or any other
// default-ignorable code point.
func hasInvisible(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) ||
			unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r)
	})
}

// checkLocalPart refuses a local part PRECIS refuses or would change, or
// one mixing scripts.
func checkLocalPart(field, local string) error {
	if !dotAtom(local) {
		return Invalid(field, CodeValidationFailed, "%s needs quoting; use an address whose local part needs none", field)
	}
	if out, err := precis.UsernameCasePreserved.String(local); err != nil || out != local {
		return Invalid(field, CodeValidationFailed,
			"%s has a character not allowed in an address (fullwidth, symbol or unnormalised form)", field)
	}
	if mixedScripts(local) {
		return Invalid(field, CodeValidationFailed, "%s mixes letters of different scripts", field)
	}
	return nil
}

// dotAtom reports whether local is an RFC 5322 dot-atom (RFC 6532: other
// than ASCII allowed), so the stored address needs no quoting to parse again.
func dotAtom(local string) bool {
	if local == "" || strings.HasPrefix(local, ".") || strings.HasSuffix(local, ".") || strings.Contains(local, "..") {
		return false
	}
	for _, r := range local {
		if r < 0x80 && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(".!#$%&'*+-/=?^_`{|}~", r) {
			return false
		}
	}
	return true
}

// scriptSets are the script combinations one writing system uses (UTS 39,
// highly restrictive); any single script is allowed too.
var scriptSets = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// mixedScripts reports letters (and digits) of scripts no single writing
// system combines. Common and Inherited characters go with any script.
func mixedScripts(s string) bool {
	seen := map[string]bool{}
	for _, r := range s {
		if name := scriptOf(r); name != "" {
			seen[name] = true
		}
	}
	if len(seen) <= 1 {
		return false
	}
	for _, set := range scriptSets {
		if coveredBy(seen, set) {
			return false
		}
	}
	return true
}

func coveredBy(seen map[string]bool, set []string) bool {
	for name := range seen {
		if !slices.Contains(set, name) {
			return false
		}
	}
	return true
}

// scriptOf names r's script, or "" for Common and Inherited characters.
func scriptOf(r rune) string {
	if r < 0x80 {
		if unicode.IsLetter(r) {
			return "Latin"
		}
		return ""
	}
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return name
		}
	}
	return ""
}
