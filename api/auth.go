package api

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"time"

	"platformapi/resources"
)

// touchInterval bounds how often a token's last use is written.
const touchInterval = time.Minute

// Authenticator turns an Authorization header into a checked credential. It is
// the one place tokens are verified, for REST and MCP alike.
type Authenticator struct {
	pepper  resources.Pepper
	creds   resources.Credentials
	now     func() time.Time
	logger  *slog.Logger
	mu      sync.Mutex
	touched map[int64]time.Time // token id → last recorded use
}

// NewAuthenticator builds an Authenticator; an unconfigured pepper makes
// every authentication answer 503 api_tokens_unconfigured.
func NewAuthenticator(pepper resources.Pepper, creds resources.Credentials, now func() time.Time, logger *slog.Logger) *Authenticator {
	return &Authenticator{pepper: pepper, creds: creds, now: now, logger: logger, touched: map[int64]time.Time{}}
}

// Authenticate checks the bearer token in header for a client at addr. It
// rejects a malformed token or a wrong checksum before any lookup.
func (a *Authenticator) Authenticate(ctx context.Context, header string, addr netip.Addr) (*resources.Credential, error) {
	if !a.pepper.Configured() {
		return nil, resources.Errorf(resources.KindUnavailable, resources.CodeAPITokensUnconfigured,
			"API tokens are not configured on this installation; an operator must set the token pepper")
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return nil, resources.Errorf(resources.KindUnauthorized, resources.CodeNotAuthenticated,
			"send Authorization: Bearer <API token>")
	}
	token = strings.TrimSpace(token)
	if _, ok := resources.ParseTokenKind(token); !ok {
		return nil, resources.Errorf(resources.KindUnauthorized, resources.CodeTokenInvalid, "the token is malformed")
	}
	cred, err := a.creds.CredentialByHash(ctx, a.pepper.Hash(token))
	if err != nil {
		return nil, err
	}
	now := a.now()
	if err := cred.Check(now, addr); err != nil {
		return nil, err
	}
	cred.Address = addr
	a.touch(ctx, cred, now)
	return cred, nil
}

// touch records the token's use at most once per touchInterval per token, so
// last_used_at is kept without a write per request.
func (a *Authenticator) touch(ctx context.Context, cred *resources.Credential, now time.Time) {
	id := cred.Token.ID
	a.mu.Lock()
	last, seen := a.touched[id]
	if !seen && cred.Token.LastUsedAt != nil {
		last, seen = *cred.Token.LastUsedAt, true
	}
	fresh := seen && now.Sub(last) < touchInterval
	if !fresh {
		a.touched[id] = now
	}
	a.mu.Unlock()
	if fresh {
		return
	}
	if err := a.creds.TouchToken(context.WithoutCancel(ctx), id, now); err != nil {
		loggerFrom(ctx, a.logger).Warn("recording token use failed", "token_id", id, "error", err)
	}
}
