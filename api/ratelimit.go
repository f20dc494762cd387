package api

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate-limit policy: per token a burst of 600 units, refilled at 10 a
// second (600 a minute on average). Every POST /mcp costs
// one unit (initialize, tools/list, ping…); a tool call costs two in all,
// taken together by its POST.
const (
	RatePerMinute  = 600
	mcpCallCost    = 2
	mcpMessageCost = 1
	restCallCost   = 1
)

// MCPToolCall is the JSON-RPC method of an MCP tool call.
const MCPToolCall = "tools/call"

// RateDecision is a limiter's answer for one request.
type RateDecision struct {
	Allowed    bool
	Limit      int
	Remaining  int
	RetryAfter time.Duration // when refused: how long until the cost fits
}

// Status is the budget d leaves, as GET /whoami and MCP results show it.
func (d RateDecision) Status() RateStatus {
	s := RateStatus{Limit: d.Limit, Remaining: d.Remaining}
	if d.Limit > 0 && d.Remaining < d.Limit { // the spent units refill at Limit a minute
		s.ResetSeconds = ((d.Limit-d.Remaining)*60 + d.Limit - 1) / d.Limit
	}
	return s
}

// RateStatus is a token's rate budget right after a request's charge: the
// RateLimit-Limit and RateLimit-Remaining of the same answer, and when the
// budget is full again.
type RateStatus struct {
	Limit        int `json:"limit" doc:"Units of a full budget; it refills evenly over a minute"`
	Remaining    int `json:"remaining"`
	ResetSeconds int `json:"reset_seconds" doc:"Seconds until the budget is full again"`
}

// RateLimiter takes units from a key's budget. The in-process limiter serves
// one replica; a shared (Redis) one can take its place behind this interface.
type RateLimiter interface {
	Take(ctx context.Context, key string, cost int) (RateDecision, error)
}

// LocalLimiter is an in-process token bucket per key (golang.org/x/time/rate):
// a full bucket of perMinute units refilling evenly over a minute.
type LocalLimiter struct {
	perMinute int
	now       func() time.Time
	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
}

// NewLocalLimiter builds an in-process limiter of perMinute units per key;
// now nil means time.Now.
func NewLocalLimiter(perMinute int, now func() time.Time) *LocalLimiter {
	if now == nil {
		now = time.Now
	}
	return &LocalLimiter{perMinute: perMinute, now: now, buckets: map[string]*rate.Limiter{}}
}

// Take spends cost units of key's budget, or refuses and says when to retry.
func (l *LocalLimiter) Take(_ context.Context, key string, cost int) (RateDecision, error) {
	now := l.now()
	b := l.bucket(key, now)
	d := RateDecision{Limit: l.perMinute}
	r := b.ReserveN(now, cost)
	if !r.OK() {
		d.RetryAfter = time.Minute
		return d, nil
	}
	if delay := r.DelayFrom(now); delay > 0 {
		r.CancelAt(now)
		d.RetryAfter = delay
		d.Remaining = max(0, int(b.TokensAt(now)))
		return d, nil
	}
	d.Allowed = true
	d.Remaining = max(0, int(b.TokensAt(now)))
	return d, nil
}

// bucket finds or makes key's bucket, dropping full (idle) buckets when the
// map grows so memory follows the number of active tokens.
func (l *LocalLimiter) bucket(key string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[key]; ok {
		return b
	}
	if len(l.buckets) >= 10_000 {
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(l.perMinute) {
				delete(l.buckets, k)
			}
		}
	}
	b := rate.NewLimiter(rate.Limit(float64(l.perMinute)/60), l.perMinute)
	l.buckets[key] = b
	return b
}
