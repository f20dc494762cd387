package api

import (
	"context"
	"net/netip"
	"strconv"
	"sync"
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
// which addresses used their budget up and until when.
type failureLimit struct {
	limiter RateLimiter
	now     func() time.Time
	mu      sync.Mutex
	blocked map[netip.Addr]time.Time // address → refused until
}

func newFailureLimit(l RateLimiter, now func() time.Time) *failureLimit {
	return &failureLimit{limiter: l, now: now, blocked: map[netip.Addr]time.Time{}}
}

// check refuses an address that used up its failures, before any lookup.
func (f *failureLimit) check(addr netip.Addr) error {
	f.mu.Lock()
	until, ok := f.blocked[addr]
	f.mu.Unlock()
	if wait := until.Sub(f.now()); ok && wait > 0 {
		return tooManyFailures(wait)
	}
	return nil
}

// failed charges one failure to addr; when that spends its budget the
// address is refused until one more failure fits (a unit's refill time, or
// the limiter's Retry-After).
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
}

func tooManyFailures(wait time.Duration) error {
	return &resources.Error{Kind: resources.KindTooManyRequests, Code: resources.CodeRateLimited, RetryAfter: wait,
		Detail: "more than " + strconv.Itoa(AuthFailuresPerMinute) + " failed authentications a minute from this " +
			"address; retry after Retry-After seconds with a valid token"}
}
