package resources

import (
	"net/mail"
	"strings"

	"golang.org/x/net/idna"
)

const maxEmailLen = 254

// NormalizeEmail returns the canonical stored form of an e-mail address:
// surrounding whitespace dropped, a "Name <address>" form reduced to the
// address, the domain lower-cased and converted to its ASCII (punycode)
// form, the local part kept as written. field names the member on error.
func NormalizeEmail(field, in string) (string, error) {
	s := strings.TrimSpace(in)
	addr, err := mail.ParseAddress(s)
	if err != nil {
		return "", Invalid(field, CodeValidationFailed, "%s is not an e-mail address", field)
	}
	at := strings.LastIndexByte(addr.Address, '@')
	if at <= 0 || at == len(addr.Address)-1 {
		return "", Invalid(field, CodeValidationFailed, "%s is not an e-mail address", field)
	}
	domain, err := idna.Lookup.ToASCII(strings.ToLower(addr.Address[at+1:]))
	if err != nil || !strings.Contains(domain, ".") {
		return "", Invalid(field, CodeValidationFailed, "%s has an invalid domain", field)
	}
	out := addr.Address[:at+1] + strings.ToLower(domain)
	if len(out) > maxEmailLen {
		return "", Invalid(field, CodeValidationFailed, "%s is longer than %d characters", field, maxEmailLen)
	}
	return out, nil
}
