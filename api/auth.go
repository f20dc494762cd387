package api

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"platformapi/resources"
)

// touchInterval bounds how often a token's last use is written.
const touchInterval = time.Minute

// touchTimeout bounds the write of a token's last use.
const touchTimeout = 2 * time.Second

// Authenticator turns an Authorization header into a checked credential. It is
// the one place tokens are verified, for REST and MCP alike.
type Authenticator struct {
	pepper   resources.Pepper
	mac      *resources.MAC // the pepper's Hash, its states reused
	creds    resources.Credentials
	now      func() time.Time
	logger   *slog.Logger
	cache    *CredentialCache // nil: every request reads PostgreSQL
	touches  touchLog
	failures *failureLimit
	live     *liveTokens // the tokens a refused address may still present
}

// NewAuthenticator builds an Authenticator; an unconfigured pepper makes
// every authentication answer 503 api_tokens_unconfigured. failures counts
// failed authentications per client address (nil: in-process,
// AuthFailuresPerMinute per address). recheck paces the whole reloads of
// its view of live tokens (0: DefaultRecheck).
func NewAuthenticator(pepper resources.Pepper, creds resources.Credentials, now func() time.Time,
	logger *slog.Logger, failures RateLimiter, recheck time.Duration) *Authenticator {
	if failures == nil {
		failures = NewLocalLimiter(AuthFailuresPerMinute, now)
	}
	return &Authenticator{pepper: pepper, mac: resources.NewMAC(pepper), creds: creds,
		now: now, logger: logger,
		touches: touchLog{at: map[int64]time.Time{}}, failures: newFailureLimit(failures, now),
		live: newLiveTokens(creds, cmp.Or(recheck, DefaultRecheck), logger)}
}

// AuthorizationHeader is the request's Authorization header as Authenticate
// reads it: a header sent more than once is joined with commas (RFC 9110),
// which Authenticate refuses, rather than its first value.
func AuthorizationHeader(h http.Header) string {
	if v := h.Values("Authorization"); len(v) > 1 {
		return strings.Join(v, ", ")
	}
	return h.Get("Authorization")
}

// Authenticate checks the bearer token in header for a client at addr. It
// rejects a malformed token or a wrong checksum before any lookup, and,
// from an address that failed too often, a token that is not live (429
// rate_limited) before any lookup too; a live token is always looked up.
func (a *Authenticator) Authenticate(ctx context.Context, header string, addr netip.Addr) (*resources.Credential, error) {
	if !a.pepper.Configured() {
		return nil, resources.PepperUnconfigured("API tokens")
	}
	token, ok := bearerCredential(header)
	if !ok {
		return nil, resources.Errorf(resources.KindUnauthorized, resources.CodeNotAuthenticated,
			"send Authorization: Bearer <API token>")
	}
	if strings.IndexByte(token, ',') >= 0 { // AuthorizationHeader joined two headers; no token has a comma
		return nil, resources.Errorf(resources.KindUnauthorized, resources.CodeTokenInvalid,
			"send one Authorization header with one token")
	}
	if _, ok := resources.ParseTokenKind(token); !ok {
		return nil, resources.Unauthorized(resources.CodeTokenInvalid, resources.RemedyTokenInvalid,
			"the token is malformed or fails its checksum")
	}
	sum := a.mac.Sum(token)
	hash := sum[:]
	if err := a.failures.check(addr, hash, a.live.has); err != nil {
		return nil, err
	}
	cred, err := a.lookup(ctx, hash)
	now := a.now()
	if err == nil {
		err = cred.Check(now, addr)
	}
	if err != nil {
		if e, ok := resources.AsError(err); ok && e.Kind == resources.KindUnauthorized {
			a.failures.failed(ctx, addr)
		}
		return nil, err
	}
	cred.Address = addr
	noteToken(ctx, cred.Token.ID)
	a.touch(ctx, cred, now)
	return cred, nil
}

// lookup resolves a token hash: from the credential cache when it holds a
// fresh entry, else from the database (then cached). A load that an
// invalidation overtook is used for this request but not kept.
func (a *Authenticator) lookup(ctx context.Context, hash []byte) (*resources.Credential, error) {
	if a.cache == nil {
		return a.creds.CredentialByHash(ctx, hash)
	}
	key := string(hash)
	if cred, ok := a.cache.get(key); ok {
		return cred, nil
	}
	gen, loaded := a.cache.generation(), a.cache.now()
	cred, err := a.creds.CredentialByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	a.cache.put(key, cred, gen, loaded)
	return cred, nil
}

// touch records the token's use at most once per touchInterval per token, so
// last_used_at is kept without a write per request.
func (a *Authenticator) touch(ctx context.Context, cred *resources.Credential, now time.Time) {
	id := cred.Token.ID
	if !a.touches.due(id, cred.Token.LastUsedAt, now) {
		return
	}
	// Not cut short by a client hanging up, but never holding a request long.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), touchTimeout)
	defer cancel()
	if err := a.creds.TouchToken(tctx, id, now); err != nil {
		loggerFrom(ctx, a.logger).Warn("recording token use failed", "token_id", id, "error", err)
	}
}

// touchLog remembers when each token's last use was written, so that it is
// written at most once per touchInterval. Entries older than touchInterval
// say nothing more than an absent one (the use is due either way) and are
// dropped once per interval: the log holds the tokens used lately, not
// every token the process has seen.
type touchLog struct {
	mu    sync.Mutex
	at    map[int64]time.Time // token id → last recorded use
	swept time.Time
}

// due reports whether a use of token id at now must be written, and if so
// records it as written. last is the use the token's record holds (nil:
// none).
func (l *touchLog) due(id int64, last *time.Time, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) >= touchInterval {
		for k, t := range l.at {
			if now.Sub(t) >= touchInterval {
				delete(l.at, k)
			}
		}
		l.swept = now
	}
	prev, seen := l.at[id]
	if !seen && last != nil {
		prev, seen = *last, true
	}
	if seen && now.Sub(prev) < touchInterval {
		return false
	}
	l.at[id] = now
	return true
}
