package resources

import (
	"context"
	"time"
)

// GatewayVerifyPath is where the installation's AI gateway (a proxy with
// forward authentication) asks whether a presented gateway key is live.
const GatewayVerifyPath = "/ai-gateway/verify"

// Problem codes of /ai-gateway/verify (401 each, with WWW-Authenticate).
const (
	CodeGatewayKeyRequired = "gateway_key_required" // no Authorization: Bearer … was sent
	CodeGatewayKeyInvalid  = "gateway_key_invalid"  // malformed, unknown, revoked or rotated away
	CodeGatewayKeyExpired  = "gateway_key_expired"  // past its expires_at
)

// Headers /ai-gateway/verify answers a live key with, for the gateway to
// pass on to its upstream. GatewayTierHeader is absent for a key without a
// tier.
const (
	GatewayKeyIDHeader   = "X-Gateway-Key-Id"
	GatewayKeyNameHeader = "X-Gateway-Key-Name"
	GatewayTierHeader    = "X-Gateway-Tier"
)

// LiveGatewayKey is what a replica needs to open the gateway for a key that
// is not revoked: its id, name, tier, expiry and the HMAC of its current
// value. It is never shown to a client; the hash is not the value.
type LiveGatewayKey struct {
	ID        int64
	Name      string
	Tier      *string
	ExpiresAt *time.Time
	Hash      []byte // HMAC-SHA256 of the value under the server key GatewayKeyHashKeyName
}

// GatewayKeyUse is one key's latest verified use, as a replica flushes it.
type GatewayKeyUse struct {
	ID int64
	At time.Time
}

// GatewayKeyOpener is what the replicas' views of live gateway keys read:
// the server key values are hashed under, every live key (at start, on a
// resync and every re-check interval), one key after a change of it, and
// the batched write of last uses.
type GatewayKeyOpener interface {
	// GatewayKeyHashKey is the server key gateway key values are hashed under.
	GatewayKeyHashKey(ctx context.Context) (Pepper, error)
	// LiveGatewayKeys lists every key that is not revoked (expired ones
	// included: verify names their expiry).
	LiveGatewayKeys(ctx context.Context) ([]LiveGatewayKey, error)
	// LiveGatewayKey reads one key; nil when it is revoked or gone.
	LiveGatewayKey(ctx context.Context, id int64) (*LiveGatewayKey, error)
	// RecordGatewayKeyUses writes last_used_at of every key in uses in one
	// statement, never moving one back; no audit event.
	RecordGatewayKeyUses(ctx context.Context, uses []GatewayKeyUse) error
}
