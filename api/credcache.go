package api

import (
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"platformapi/resources"
)

// DefaultRecheck is how long a cached credential is trusted before it is
// read again from PostgreSQL: the contract's bound on a revocation's delay
// while the shared cache is unavailable (Authentication 8).
const DefaultRecheck = 30 * time.Second

// maxCachedCredentials bounds the cache; past it, stale entries go first and
// then everything (it refills from the database).
const maxCachedCredentials = 50_000

// maxKeySets bounds the key sets the cache shares between its entries;
// past it the table starts again (entries keep the slices they hold).
const maxKeySets = 1024

// CredentialCache keeps authenticated credentials by token hash so the hot
// path skips PostgreSQL. An entry is trusted for at most the re-check
// interval; the change feed drops entries at once when a token, its owner or
// a role changes. Expiry, revocation, the owner's status and the client's
// address are still checked on every request, against the cached record.
// Safe for concurrent use.
type CredentialCache struct {
	recheck time.Duration
	now     func() time.Time
	mu      sync.Mutex
	gen     uint64 // bumped by every invalidation; a load older than it is not kept
	entries map[string]credentialEntry
	sets    map[string][]string // key set (joined) → the one slice entries share
	swept   time.Time           // when stale entries were last dropped
	metrics cacheMetrics
}

type credentialEntry struct {
	cred   resources.Credential
	loaded time.Time
}

// NewCredentialCache builds a cache trusting an entry for recheck (0:
// DefaultRecheck); now nil means time.Now. With a registerer, it reports
// hits, misses and invalidations.
func NewCredentialCache(recheck time.Duration, now func() time.Time, reg prometheus.Registerer) *CredentialCache {
	if recheck <= 0 {
		recheck = DefaultRecheck
	}
	if now == nil {
		now = time.Now
	}
	return &CredentialCache{recheck: recheck, now: now, entries: map[string]credentialEntry{},
		sets: map[string][]string{}, metrics: newCacheMetrics(reg)}
}

// Recheck is the longest a cached credential is trusted.
func (c *CredentialCache) Recheck() time.Duration { return c.recheck }

// get returns a private copy of the credential cached under hash, when it is
// younger than the re-check interval.
func (c *CredentialCache) get(hash string) (*resources.Credential, bool) {
	c.mu.Lock()
	e, ok := c.entries[hash]
	if ok && c.now().Sub(e.loaded) >= c.recheck {
		delete(c.entries, hash)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		c.metrics.misses.Inc()
		return nil, false
	}
	c.metrics.hits.Inc()
	cred := e.cred
	return &cred, true
}

// generation is read before a database load; put keeps the load only when no
// invalidation happened meanwhile (it could be older than the change).
func (c *CredentialCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put caches cred under hash, loaded at generation gen. At most once per
// re-check interval it first drops the stale entries, so the cache holds
// about the credentials used within the last interval rather than every
// token seen since the cap was last reached.
func (c *CredentialCache) put(hash string, cred *resources.Credential, gen uint64, loaded time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if now := c.now(); now.Sub(c.swept) >= c.recheck {
		c.dropStaleLocked(now) // a stale entry is never served: it only holds memory
		c.swept = now
	}
	if len(c.entries) >= maxCachedCredentials {
		c.evictLocked()
	}
	e := credentialEntry{cred: *cred, loaded: loaded}
	e.cred.Address = netip.Addr{}
	e.cred.Token.Scopes = c.sharedLocked(e.cred.Token.Scopes)
	e.cred.Owner.Permissions = c.sharedLocked(e.cred.Owner.Permissions)
	c.entries[hash] = e
}

// sharedLocked returns the one slice of the cache's entries that holds
// keys (compared by content), keeping keys as that slice when there is none
// yet. Many tokens carry the same scopes and many share an owner, so
// thousands of cached credentials hold a handful of sets. Like every
// cached credential's, a shared slice is never written: its capacity is
// its length, so an append copies. c.mu is held.
func (c *CredentialCache) sharedLocked(keys []string) []string {
	if len(keys) == 0 {
		return keys
	}
	id := strings.Join(keys, "\x00")
	if s, ok := c.sets[id]; ok {
		return s
	}
	if len(c.sets) >= maxKeySets {
		clear(c.sets)
	}
	s := slices.Clip(keys)
	c.sets[id] = s
	return s
}

// evictLocked drops stale entries, or all of them when none is stale.
func (c *CredentialCache) evictLocked() {
	c.dropStaleLocked(c.now())
	if len(c.entries) >= maxCachedCredentials {
		clear(c.entries)
	}
}

// dropStaleLocked drops the entries older than the re-check interval.
func (c *CredentialCache) dropStaleLocked(now time.Time) {
	for k, e := range c.entries {
		if now.Sub(e.loaded) >= c.recheck {
			delete(c.entries, k)
		}
	}
}

// Changed drops every cached credential the change can affect: a token's,
// a principal's tokens, or all of them for a role change.
func (c *CredentialCache) Changed(ch resources.Change) {
	switch ch.Kind {
	case resources.ChangeToken:
		c.drop(ch.Kind, func(cr *resources.Credential) bool { return cr.Token.ID == ch.TokenID })
	case resources.ChangePrincipal:
		c.drop(ch.Kind, func(cr *resources.Credential) bool {
			return cr.Owner.Kind == ch.PrincipalKind && cr.Owner.ID == ch.PrincipalID
		})
	case resources.ChangeAPISwitch, resources.ChangeGatewayKey: // no credential depends on them
	default: // roles and kinds this replica does not know yet: trust nothing
		c.Flush(ch.Kind)
	}
}

// Flush drops every cached credential (the feed may have missed events);
// reason labels the invalidation metric.
func (c *CredentialCache) Flush(reason string) {
	c.drop(reason, func(*resources.Credential) bool { return true })
}

func (c *CredentialCache) drop(reason string, match func(*resources.Credential) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, e := range c.entries {
		if match(&e.cred) {
			delete(c.entries, k)
		}
	}
	c.metrics.invalidations.WithLabelValues(reason).Inc()
}

// cacheMetrics are the cache's Prometheus metrics; unregistered (no-op)
// collectors when no registerer is given.
type cacheMetrics struct {
	hits, misses  prometheus.Counter
	invalidations *prometheus.CounterVec
}

func newCacheMetrics(reg prometheus.Registerer) cacheMetrics {
	m := cacheMetrics{
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "platformapi_credential_cache_hits_total",
			Help: "Authentications answered from the credential cache."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "platformapi_credential_cache_misses_total",
			Help: "Authentications that read the credential from PostgreSQL."}),
		invalidations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platformapi_credential_cache_invalidations_total",
			Help: "Invalidations of cached credentials by the change feed, by kind (flush: a resync)."},
			[]string{"kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.hits, m.misses, m.invalidations)
	}
	return m
}
