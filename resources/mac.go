package resources

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"sync"
)

// MAC is HMAC-SHA256 under one key with its states reused: the form asked
// on every request (a token under the pepper, as Pepper.Hash; a gateway key
// under the server key, as GatewayKeyHasher.Hash), where building a new HMAC
// costs two SHA-256 states and the key schedule a call. Sum allocates
// nothing. It is safe for concurrent use.
type MAC struct {
	states sync.Pool // *macState under the key
}

// macState is a reusable HMAC with a buffer for the value's bytes (a string
// passed to Write directly would be copied to the heap on every call).
type macState struct {
	mac hash.Hash
	buf [64]byte
	sum [sha256.Size]byte
}

// NewMAC hashes under key (copied: a later change to key's bytes does not
// reach it).
func NewMAC(key []byte) *MAC {
	key = append([]byte(nil), key...)
	m := &MAC{}
	m.states.New = func() any { return &macState{mac: hmac.New(sha256.New, key)} }
	return m
}

// Sum returns HMAC-SHA256(key, value).
func (m *MAC) Sum(value string) [sha256.Size]byte {
	s := m.states.Get().(*macState)
	s.mac.Reset()
	if len(value) <= len(s.buf) {
		s.mac.Write(s.buf[:copy(s.buf[:], value)])
	} else {
		s.mac.Write([]byte(value))
	}
	sum := [sha256.Size]byte(s.mac.Sum(s.sum[:0]))
	m.states.Put(s)
	return sum
}

// isBase62 reports whether c is one of the characters of a token's or a
// gateway key's random part.
func isBase62(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}
