package api

import (
	"context"
	"net/http"
	"net/netip"
)

// requestFacts is what the root chain learns about a request before its
// handler runs — the client's address (ClientAddrs), the request id
// (requestIDMiddleware) and the access record (observe) — kept in one
// context value, so the chain copies the request once for all three instead
// of once each. Its first middleware adds it; the others fill it in. Only
// the chain writes id and client, before the handler runs; the record has
// its own lock.
type requestFacts struct {
	id        string
	client    netip.Addr
	hasClient bool // client was derived (the zero Addr can be a derived one)
	observed  bool // an observe owns rec
	rec       requestRecord
}

// factsOf returns the facts of the request ctx belongs to, or nil.
func factsOf(ctx context.Context) *requestFacts {
	f, _ := ctx.Value(keyFacts).(*requestFacts)
	return f
}

// withFacts returns r with f as its facts.
func withFacts(r *http.Request, f *requestFacts) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), keyFacts, f))
}

// ensureFacts returns r's facts, adding empty ones to r first when it has
// none.
func ensureFacts(r *http.Request) (*requestFacts, *http.Request) {
	if f := factsOf(r.Context()); f != nil {
		return f, r
	}
	f := &requestFacts{}
	return f, withFacts(r, f)
}

// observedFacts returns the facts whose record the observe serving r
// fills: r's own when no observe took them yet, else (an in-process call
// inside an observed request) new facts with the same id and client and a
// record of the call's own.
func observedFacts(r *http.Request) (*requestFacts, *http.Request) {
	f := factsOf(r.Context())
	if f != nil && !f.observed {
		f.observed = true
		return f, r
	}
	own := &requestFacts{observed: true}
	if f != nil {
		own.id, own.client, own.hasClient = f.id, f.client, f.hasClient
	}
	return own, withFacts(r, own)
}
