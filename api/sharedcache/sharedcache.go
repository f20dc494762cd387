// Package sharedcache is the installation's shared cache on Redis: the
// per-token rate budget every replica draws from (GCRA, go-redis/redis_rate)
// and the change feed (Redis pub/sub) that tells every replica at once which
// cached credentials to drop. When Redis is unreachable each replica falls
// back to its own limiter and trusts cached credentials only for the
// re-check interval; it says so once in its log and in its metrics, and
// recovers by itself (flushing its cache, since it may have missed events).
package sharedcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"platformapi/api"
	"platformapi/resources"
)

// keyPrefix starts every name the shared cache uses in Redis: the change
// feed's channel (prefix + "changes") and every rate-limit key (redis_rate
// adds its own "rate:" in front); with Options.Installation, the
// installation's id follows it ("platformapi:<id>:").
const keyPrefix = "platformapi:"

// Timeouts: one Redis command may take opTimeout before the replica falls
// back; the subscription is pinged every pingEvery and presumed lost after
// three silent intervals; a lost subscription is retried every retryEvery.
const (
	opTimeout  = 500 * time.Millisecond
	pingEvery  = time.Second
	retryEvery = 500 * time.Millisecond
)

// connBuffer sizes each Redis connection's read and write buffers
// (go-redis: 32 KiB each). A replica's commands and replies — rate-limit
// scripts, change messages — are under 1 KiB, and 32 KiB buffers held 1.3
// MB of a 20 MB live heap at 64 connections; a larger reply still reads
// whole, through more reads.
const connBuffer = 4 << 10

// Options configure a Shared.
type Options struct {
	URL       string       // redis://[user:password@]host:port/db
	PerMinute int          // 0: api.RatePerMinute
	Logger    *slog.Logger // nil: slog.Default()
	// Installation answers the id of the installation the replicas share;
	// its rate keys and change channel are scoped to it, so installations
	// on one Redis database share neither budgets (token ids coincide) nor
	// changes. Asked on first use, when the database is migrated; nil:
	// no scope.
	Installation func(context.Context) (string, error)
}

// Shared is one process's connection to the shared cache. It is an
// api.RateLimiter and a resources.ChangePublisher; Run keeps the change
// feed's subscription (serve only; a portal command just publishes).
type Shared struct {
	client    *redis.Client
	limiter   *rateLimiter
	failures  *rateLimiter // failed authentications per client address
	logger    *slog.Logger
	state     atomic.Int32 // stateUnknown, stateUp or stateDown
	kick      chan struct{}
	mu        sync.Mutex
	sink      resources.ChangeSink
	fallback  prometheus.Gauge
	published *prometheus.CounterVec
	install   func(context.Context) (string, error)
	prefix    atomic.Pointer[string] // keyPrefix and the installation's id, once read
}

// New connects lazily to the Redis at o.URL: an unreachable Redis is not an
// error here (the replica starts in fallback and recovers when it appears);
// a malformed URL is.
func New(o Options) (*Shared, error) {
	setRedisLogger.Do(func() { redis.SetLogger(quietLogger{}) })
	ro, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("sharedcache: --redis-url: %w", err)
	}
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = opTimeout, opTimeout, opTimeout
	ro.PoolTimeout, ro.MaxRetries = opTimeout, 1
	ro.ReadBufferSize, ro.WriteBufferSize = connBuffer, connBuffer
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PerMinute <= 0 {
		o.PerMinute = api.RatePerMinute
	}
	s := &Shared{client: redis.NewClient(ro), logger: o.Logger, kick: make(chan struct{}, 1),
		install: o.Installation}
	s.limiter = newRateLimiter(s, o.PerMinute, nil)
	s.failures = newRateLimiter(s, api.AuthFailuresPerMinute, s.limiter.decisions)
	s.fallback = prometheus.NewGauge(prometheus.GaugeOpts{Name: "platformapi_shared_cache_fallback",
		Help: "1 while Redis is unreachable: per-replica rate limits, credentials re-checked by interval."})
	s.published = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "platformapi_change_feed_published_total",
		Help: "Changes published to the feed, by kind and result."}, []string{"kind", "result"})
	s.fallback.Set(1) // until the feed's subscription is confirmed
	return s, nil
}

// Register adds the shared cache's metrics (fallback state, rate-limit
// decisions, published changes) to reg; nil registers nothing.
func (s *Shared) Register(reg prometheus.Registerer) {
	if reg != nil {
		reg.MustRegister(s.fallback, s.published, s.limiter.decisions)
	}
}

// States of the connection to Redis; unknown until the first attempt.
const (
	stateUnknown int32 = iota
	stateUp
	stateDown
)

// Healthy reports whether the feed's subscription is confirmed and no
// command to Redis has failed since.
func (s *Shared) Healthy() bool { return s.state.Load() == stateUp }

// Take implements api.RateLimiter: the shared budget while Redis answers,
// this replica's own limiter otherwise.
func (s *Shared) Take(ctx context.Context, key string, cost int) (api.RateDecision, error) {
	return s.limiter.Take(ctx, key, cost)
}

// AuthFailures is the failed-authentication budget of client addresses
// (api.AuthFailuresPerMinute each), shared by the replicas as the rate
// budget is: give it to api.Config.AuthFailures.
func (s *Shared) AuthFailures() api.RateLimiter { return s.failures }

// Publish implements resources.ChangePublisher: the change is applied to
// this process's own sink at once, then sent to every replica. A failed send
// is logged; other replicas then see the change within their re-check
// interval.
func (s *Shared) Publish(ctx context.Context, c resources.Change) {
	if sink := s.currentSink(); sink != nil {
		sink.Changed(c)
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	channel, err := s.name(ctx, "changes")
	if err == nil {
		err = s.client.Publish(ctx, channel, c.Encode()).Err()
	}
	cancel()
	if err != nil {
		s.published.WithLabelValues(c.Kind, "failed").Inc()
		s.logger.Warn("publishing a change to the shared cache failed: "+
			"other replicas apply it within their re-check interval",
			"change", c.Kind, "error", err)
		return
	}
	s.published.WithLabelValues(c.Kind, "sent").Inc()
}

// name is what the shared cache calls name in Redis: within the
// installation's scope when Options.Installation gives one.
func (s *Shared) name(ctx context.Context, name string) (string, error) {
	if p := s.prefix.Load(); p != nil {
		return *p + name, nil
	}
	prefix := keyPrefix
	if s.install != nil {
		id, err := s.install(ctx)
		if err != nil {
			return "", fmt.Errorf("%w: %w", errNoInstallation, err)
		}
		prefix += id + ":"
	}
	s.prefix.Store(&prefix)
	return prefix + name, nil
}

// Close closes the connections.
func (s *Shared) Close() error { return s.client.Close() }

func (s *Shared) currentSink() resources.ChangeSink {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sink
}

// setHealthy records a transition, logging and counting it once.
func (s *Shared) setHealthy(up bool, cause error) {
	next := map[bool]int32{true: stateUp, false: stateDown}[up]
	if s.state.Swap(next) == next {
		return
	}
	if up {
		s.fallback.Set(0)
		s.logger.Info("shared cache (Redis) reachable: shared rate limits and change feed; cached credentials flushed")
		return
	}
	s.fallback.Set(1)
	why, until := "shared cache (Redis) unreachable", "it returns"
	if errors.Is(cause, errNoInstallation) { // Redis answers; the names in it cannot be scoped yet
		why = "shared cache (Redis) not in use: the installation id could not be read from PostgreSQL"
		until = "it can be read"
	}
	s.logger.Warn(why+": rate limits are per replica and credentials are re-checked "+
		"against PostgreSQL by interval until "+until, "error", errText(cause))
}

// errNoInstallation wraps a failure to read the installation id, which
// every name in Redis carries.
var errNoInstallation = errors.New("read the installation id")

// suspect is called when a command to Redis failed: the replica falls back
// now, and the feed re-subscribes (flushing the cache) once Redis answers.
func (s *Shared) suspect(err error) {
	s.setHealthy(false, err)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// quietLogger sends go-redis's own messages (dial failures while Redis is
// down, one per attempt) to debug level: the transition is logged once by
// setHealthy instead.
type quietLogger struct{}

// Printf implements go-redis's internal logging interface.
func (quietLogger) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

var setRedisLogger sync.Once
