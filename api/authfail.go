package api

import (
	"context"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"platformapi/resources"
)

// AuthFailuresPerMinute is how many failed authentications (a well-formed
// token that is unknown, revoked, expired, of a disabled owner or from a
// refused address) one client address may cause per minute before its
// requests answer 429 rate_limited without a token lookup.
const AuthFailuresPerMinute = 60

// failureLimit counts failed authentications per client address in a
// RateLimiter (shared by replicas when it is) and remembers, per replica,
// which addresses used their budget up and until when. It guards lookups,
// not live credentials: a refused address may still present a token of the
// view of live tokens (liveTokens), and only that costs a lookup.
type failureLimit struct {
	limiter  RateLimiter
	now      func() time.Time
	mu       sync.Mutex
	blocked  map[netip.Addr]time.Time // address → refused until
	nBlocked atomic.Int64             // len(blocked), read without mu
}

func newFailureLimit(l RateLimiter, now func() time.Time) *failureLimit {
	return &failureLimit{limiter: l, now: now, blocked: map[netip.Addr]time.Time{}}
}

// check refuses, before any lookup, a token that live does not hold from
// an address that used up its failures.
func (f *failureLimit) check(addr netip.Addr, hash []byte, live func([]byte) bool) error {
	if f.nBlocked.Load() == 0 {
		return nil // nobody used up their failures: every request asks, none waits on mu
	}
	now := f.now()
	f.mu.Lock()
	until, blocked := f.blocked[addr]
	f.mu.Unlock()
	if wait := until.Sub(now); blocked && wait > 0 && !live(hash) {
		return tooManyFailures(wait)
	}
	return nil
}

// failed charges one failure to addr; when that spends the address's
// budget it is refused until one more failure fits (a unit's refill time,
// or the limiter's Retry-After).
func (f *failureLimit) failed(ctx context.Context, addr netip.Addr) {
	d, err := f.limiter.Take(ctx, "auth-failures:"+addr.String(), 1)
	if err != nil || d.Allowed && d.Remaining > 0 {
		return // an unavailable limiter never locks clients out
	}
	wait := d.RetryAfter
	if d.Allowed {
		wait = time.Minute / time.Duration(max(d.Limit, 1))
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.blocked) >= 10_000 {
		for a, until := range f.blocked {
			if !until.After(now) {
				delete(f.blocked, a)
			}
		}
	}
	f.blocked[addr] = now.Add(max(wait, time.Second))
	f.nBlocked.Store(int64(len(f.blocked)))
}

func tooManyFailures(wait time.Duration) error {
	return &resources.Error{Kind: resources.KindTooManyRequests, Code: resources.CodeRateLimited, RetryAfter: wait,
		Detail: "more than " + strconv.Itoa(AuthFailuresPerMinute) + " failed authentications a minute from this " +
			"address; retry with a valid token after " + resources.RetryAfterWords}
}
