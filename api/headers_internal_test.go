package api

import (
	"net/http"
	"strings"
	"testing"
)

// TestHeaderNames_CanonicalAndTheContractsNames: the names every request
// reads or writes are in net/http's canonical form (any other spelling is
// copied into it on every Get and Set) and are the contract's headers.
func TestHeaderNames_CanonicalAndTheContractsNames(t *testing.T) {
	for name, contract := range map[string]string{requestIDKey: RequestIDHeader,
		HeaderRateLimit: "RateLimit-Limit", HeaderRateRemaining: "RateLimit-Remaining",
		HeaderRatePolicy: "RateLimit-Policy"} {
		if http.CanonicalHeaderKey(name) != name || !strings.EqualFold(name, contract) {
			t.Errorf("%q: canonical %q, contract's name %q", name, http.CanonicalHeaderKey(name), contract)
		}
	}
}

// TestNewRequestID_FormAndDistinct: a made id is "req_" and 20 base32
// characters, which the request-id rule accepts when a client sends it
// back, and ids do not repeat.
func TestNewRequestID_FormAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewRequestID()
		rest, ok := strings.CutPrefix(id, "req_")
		if !ok || len(rest) != 20 || strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" ||
			!requestIDPattern.MatchString(id) || seen[id] {
			t.Fatalf("id %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
}
