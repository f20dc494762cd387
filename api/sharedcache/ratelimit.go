package sharedcache

import (
	"context"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"

	"platformapi/api"
)

// Reservations: a replica may draw a few units of a key's shared budget
// ahead of use and spend them without asking Redis. It reserves at most
// what the key would spend in the reservation's lifetime at the pace of its
// last second (so an idle key reserves nothing), at most a tenth of what
// the shared budget had left at its last answer (so near the limit every
// request asks Redis, exactly as GCRA alone), and at most a thirtieth of
// the minute's budget (20 units of 600: two seconds of refill). Units not
// spent within reserveLifetime are dropped. Reserved units are taken from
// the shared budget before they are spent, so the replicas together never
// admit more than it grants; the bound on the overshoot is in time: in any
// window a key may see, beyond GCRA's own bound, the units the replicas
// held at its start (at most maxReserve each), spent at most
// reserveLifetime after Redis granted them. A steady key thus asks Redis
// about once per lifetime: three seconds rather than one took the Redis
// calls of a bench GET load from one in 10 requests to one in 15, and of
// MCP calls (two units, slower tokens) from one in 4 to one in 7.6.
const (
	reserveLifetime   = 3 * time.Second
	reserveRemainDiv  = 10
	reservePerMinDiv  = 30
	maxReservedKeys   = 10_000
	reserveRateWindow = time.Second
)

// rateLimiter draws from the shared GCRA budget (redis_rate) while Redis is
// healthy and from this replica's own token bucket otherwise. Both allow a
// burst of the whole minute's budget refilling evenly, so a client sees the
// same policy either way.
type rateLimiter struct {
	shared     *Shared
	gcra       *redis_rate.Limiter
	limit      redis_rate.Limit
	local      *api.LocalLimiter
	decisions  *prometheus.CounterVec
	now        func() time.Time
	maxReserve int
	mu         sync.Mutex
	reserves   map[string]*reserve
}

// reserve is what this replica knows of one key's shared budget.
type reserve struct {
	units     int       // reserved, not yet spent
	until     time.Time // units are dropped then
	remaining int       // the shared budget's remaining at Redis's last answer
	known     bool      // remaining was answered
	winStart  time.Time // the current one-second window of use
	winUsed   int       // units spent in it
	lastUsed  int       // units spent in the previous window
}

// newRateLimiter draws perMinute a key; decisions counts its answers (nil:
// a new counter).
func newRateLimiter(s *Shared, perMinute int, decisions *prometheus.CounterVec) *rateLimiter {
	if decisions == nil {
		decisions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "platformapi_rate_limit_decisions_total",
			Help: "Rate-limit decisions by where they were taken (shared: Redis; reserved: units this replica " +
				"drew from the shared budget ahead of use; local: this replica's own bucket while Redis is " +
				"unreachable) and outcome."},
			[]string{"where", "outcome"})
	}
	return &rateLimiter{shared: s, gcra: redis_rate.NewLimiter(s.client), limit: redis_rate.PerMinute(perMinute),
		local: api.NewLocalLimiter(perMinute, nil), now: time.Now, maxReserve: perMinute / reservePerMinDiv,
		reserves: map[string]*reserve{}, decisions: decisions}
}

// Take implements api.RateLimiter.
func (l *rateLimiter) Take(ctx context.Context, key string, cost int) (api.RateDecision, error) {
	if !l.shared.Healthy() {
		return l.takeLocal(ctx, key, cost)
	}
	d, extra, ok := l.takeReserved(key, cost)
	if ok {
		l.count("reserved", d)
		return d, nil
	}
	d, err := l.takeShared(ctx, key, cost, extra)
	if err != nil {
		if ctx.Err() != nil {
			return api.RateDecision{}, ctx.Err() // the client went away; Redis is not at fault
		}
		l.shared.suspect(err)
		return l.takeLocal(ctx, key, cost)
	}
	l.count("shared", d)
	return d, nil
}

// takeReserved spends cost units of key's reservation when it holds them;
// otherwise it says how many units to reserve beyond cost from Redis.
func (l *rateLimiter) takeReserved(key string, cost int) (d api.RateDecision, extra int, ok bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.reserveOf(key, now)
	if now.After(r.until) {
		r.units = 0
	}
	if r.units < cost {
		return d, l.extra(r), false
	}
	r.units -= cost
	r.spent(cost, now)
	return api.RateDecision{Allowed: true, Limit: l.limit.Burst, Remaining: r.remaining + r.units}, 0, true
}

// extra is how many units to reserve beyond a request's cost (see
// Reservations). l.mu is held.
func (l *rateLimiter) extra(r *reserve) int {
	if !r.known {
		return 0
	}
	pace := max(r.lastUsed, r.winUsed) // units per reserveRateWindow
	lifetime := pace * int(reserveLifetime/reserveRateWindow)
	return max(0, min(l.maxReserve, r.remaining/reserveRemainDiv, lifetime))
}

// takeShared asks Redis for cost units (exactly, as GCRA alone, when extra
// is 0) or for cost plus up to extra units to keep.
func (l *rateLimiter) takeShared(ctx context.Context, key string, cost, extra int) (api.RateDecision, error) {
	rctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	name, err := l.shared.name(rctx, key)
	if err != nil {
		return api.RateDecision{}, err
	}
	var res *redis_rate.Result
	if extra == 0 {
		res, err = l.gcra.AllowN(rctx, name, l.limit, cost)
	} else {
		res, err = l.gcra.AllowAtMost(rctx, name, l.limit, cost+extra)
	}
	if err != nil {
		return api.RateDecision{}, err
	}
	return l.settle(key, cost, res.Allowed, res), nil
}

// settle books what Redis granted: cost units for this request when it
// granted that many (the rest kept as the key's reservation), else a
// refusal (a partial grant, possible only when the budget holds less than
// cost, is kept for the next request).
func (l *rateLimiter) settle(key string, cost, granted int, res *redis_rate.Result) api.RateDecision {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.reserveOf(key, now)
	if now.After(r.until) {
		r.units = 0
	}
	r.remaining, r.known = l.remainingOf(res), true
	r.units += granted
	r.until = now.Add(reserveLifetime)
	d := api.RateDecision{Limit: l.limit.Burst}
	if r.units < cost {
		d.RetryAfter = res.RetryAfter
		if granted > 0 || d.RetryAfter <= 0 { // time for the units still missing to refill
			d.RetryAfter = time.Duration(cost-r.units) * l.limit.Period / time.Duration(l.limit.Rate)
		}
		d.Remaining = r.remaining + r.units
		return d
	}
	r.units -= cost
	r.spent(cost, now)
	d.Allowed, d.Remaining = true, r.remaining+r.units
	return d
}

// remainingOf is the whole units the shared budget holds after res.
// redis_rate's Remaining truncates the script's float count, which lands a
// hair under a whole number about half the time (599 comes back as 598);
// after a grant it is derived here from ResetAfter, the time until the
// budget is full again (burst − ResetAfter/emission), allowing a thousandth
// of a unit for the float. A refusal keeps the script's 0.
func (l *rateLimiter) remainingOf(res *redis_rate.Result) int {
	emission := l.limit.Period / time.Duration(max(l.limit.Rate, 1))
	if res.Allowed == 0 || emission <= 0 {
		return res.Remaining
	}
	used := res.ResetAfter - emission/1000
	return min(max(l.limit.Burst-int((used+emission-1)/emission), 0), l.limit.Burst)
}

// spent counts units spent in the current one-second window.
func (r *reserve) spent(n int, now time.Time) {
	if age := now.Sub(r.winStart); age >= reserveRateWindow {
		r.lastUsed = r.winUsed
		if age >= 2*reserveRateWindow { // a quiet second in between
			r.lastUsed = 0
		}
		r.winUsed, r.winStart = 0, now
	}
	r.winUsed += n
}

// reserveOf finds or makes key's record, dropping expired idle records when
// the map grows. l.mu is held.
func (l *rateLimiter) reserveOf(key string, now time.Time) *reserve {
	if r, ok := l.reserves[key]; ok {
		return r
	}
	if len(l.reserves) >= maxReservedKeys {
		for k, r := range l.reserves {
			if now.Sub(r.until) > reserveRateWindow {
				delete(l.reserves, k)
			}
		}
	}
	r := &reserve{winStart: now}
	l.reserves[key] = r
	return r
}

func (l *rateLimiter) takeLocal(ctx context.Context, key string, cost int) (api.RateDecision, error) {
	d, err := l.local.Take(ctx, key, cost)
	if err == nil {
		l.count("local", d)
	}
	return d, err
}

func (l *rateLimiter) count(where string, d api.RateDecision) {
	outcome := "allowed"
	if !d.Allowed {
		outcome = "refused"
	}
	l.decisions.WithLabelValues(where, outcome).Inc()
}
