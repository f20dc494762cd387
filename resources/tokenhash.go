package resources

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"sync"
)

// TokenHasher computes Pepper.Hash with its HMAC states reused: the form
// asked on every authenticated request (Pepper.Hash builds two SHA-256
// states and a key schedule a call). It is safe for concurrent use.
type TokenHasher struct {
	macs sync.Pool // *tokenMAC under the pepper
}

// tokenMAC is a reusable HMAC-SHA256 under the pepper with a buffer for the
// token's bytes (a token passed to Write directly would be copied to the
// heap on every call).
type tokenMAC struct {
	mac hash.Hash
	buf [64]byte
}

// NewTokenHasher hashes under p (copied: a later change to p's bytes does
// not reach it).
func NewTokenHasher(p Pepper) *TokenHasher {
	key := append([]byte(nil), p...)
	h := &TokenHasher{}
	h.macs.New = func() any { return &tokenMAC{mac: hmac.New(sha256.New, key)} }
	return h
}

// Hash returns what the pepper's Hash returns for token.
func (h *TokenHasher) Hash(token string) []byte {
	m := h.macs.Get().(*tokenMAC)
	m.mac.Reset()
	if len(token) <= len(m.buf) {
		m.mac.Write(m.buf[:copy(m.buf[:], token)])
	} else {
		m.mac.Write([]byte(token))
	}
	sum := m.mac.Sum(make([]byte, 0, sha256.Size))
	h.macs.Put(m)
	return sum
}

// isBase62 reports whether c is one of the characters of a token's or a
// gateway key's random part.
func isBase62(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}
