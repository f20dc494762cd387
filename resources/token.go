package resources

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"hash/crc32"
	"strings"
	"time"
)

// Token kinds and their wire prefixes.
const (
	TokenKindPersonal       = "pat"
	TokenKindServiceAccount = "sat"
	PersonalTokenPrefix     = "svc_pat_"
	ServiceTokenPrefix      = "svc_sat_"
	tokenRandomLen          = 32
	tokenChecksumLen        = 6
	tokenLen                = len(PersonalTokenPrefix) + tokenRandomLen + tokenChecksumLen
	base62                  = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// Token lifetime bounds, in days.
const (
	TokenMinDays     = 1
	TokenMaxDays     = 365
	TokenDefaultDays = 90
)

// Pepper is the server secret under which token values are hashed. Its zero
// value means "not configured".
type Pepper []byte

// Configured reports whether a usable pepper is present.
func (p Pepper) Configured() bool { return len(p) >= 16 }

// Hash returns HMAC-SHA256(pepper, token): the only form a token is stored in.
func (p Pepper) Hash(token string) []byte {
	m := hmac.New(sha256.New, p)
	m.Write([]byte(token))
	return m.Sum(nil)
}

// NewTokenValue mints a fresh token of the given kind: prefix, 32 random
// base62 characters and a 6-character base62 CRC32 checksum.
func NewTokenValue(kind string) string {
	prefix := PersonalTokenPrefix
	if kind == TokenKindServiceAccount {
		prefix = ServiceTokenPrefix
	}
	var b strings.Builder
	b.Grow(tokenLen)
	b.WriteString(prefix)
	b.WriteString(randomBase62(tokenRandomLen))
	b.WriteString(checksum(b.String()))
	return b.String()
}

// ParseTokenKind checks a presented token's shape and checksum without any
// lookup; it returns the token's kind, or false for anything malformed.
func ParseTokenKind(token string) (string, bool) {
	if len(token) != tokenLen {
		return "", false
	}
	var kind string
	switch {
	case strings.HasPrefix(token, PersonalTokenPrefix):
		kind = TokenKindPersonal
	case strings.HasPrefix(token, ServiceTokenPrefix):
		kind = TokenKindServiceAccount
	default:
		return "", false
	}
	body := token[:tokenLen-tokenChecksumLen]
	for i := len(PersonalTokenPrefix); i < len(token); i++ {
		if !isBase62(token[i]) {
			return "", false
		}
	}
	if checksum(body) != token[len(body):] {
		return "", false
	}
	return kind, true
}

// randomBase62 draws n uniform base62 characters from crypto/rand, rejecting
// bytes that would bias the modulo.
func randomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n*2)
	for len(out) < n {
		_, _ = rand.Read(buf)
		for _, c := range buf {
			if c < 248 && len(out) < n { // 248 = 4*62
				out = append(out, base62[int(c)%62])
			}
		}
	}
	return string(out)
}

func checksum(s string) string {
	n := crc32.ChecksumIEEE([]byte(s))
	out := make([]byte, tokenChecksumLen)
	for i := tokenChecksumLen - 1; i >= 0; i-- {
		out[i] = base62[n%62]
		n /= 62
	}
	return string(out)
}

// ValidateTokenDays checks a lifetime in days against the 1–365 rule.
func ValidateTokenDays(days int) error {
	if days < TokenMinDays || days > TokenMaxDays {
		return Invalid("days", CodeValidationFailed, "token lifetime must be %d to %d days, got %d", TokenMinDays, TokenMaxDays, days)
	}
	return nil
}

// TokenExpiry is the moment a token minted now with that lifetime expires.
func TokenExpiry(now time.Time, days int) time.Time {
	return now.UTC().Add(time.Duration(days) * 24 * time.Hour).Truncate(time.Second)
}

// PepperUnconfigured is the refusal of what needs the token pepper (the
// tokens and node keys, named by what) while none is configured: 503
// api_tokens_unconfigured, saying where an operator sets it. Retrying does
// not help.
func PepperUnconfigured(what string) error {
	return Errorf(KindUnavailable, CodeAPITokensUnconfigured, "%s need the token pepper, which is not "+
		"configured on this installation: an operator sets it with PLATFORMAPI_TOKEN_PEPPER or "+
		"serve's --token-pepper-file", what)
}
