package provider

import (
	"strings"

	"golang.org/x/net/idna"
)

// sameEmail reports whether the addresses a and b (configured or the
// server's) are stored as the same one: surrounding space dropped, a
// "Name <address>" form reduced to the address, the domain lower-cased and
// in its ASCII (punycode) form; the local part keeps its case.
func sameEmail(a, b string) bool {
	return normaliseEmail(a) == normaliseEmail(b)
}

func normaliseEmail(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "<"); i >= 0 && strings.HasSuffix(s, ">") {
		s = strings.TrimSpace(s[i+1 : len(s)-1])
	}
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	domain := strings.ToLower(s[at+1:])
	if ascii, err := idna.Lookup.ToASCII(domain); err == nil {
		domain = ascii
	}
	return s[:at+1] + domain
}
