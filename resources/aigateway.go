package resources

import (
	"context"
	"strings"
	"time"
)

// AI gateway defaults, key shape and problem codes.
const (
	DefaultGatewayBaseURL     = "http://127.0.0.1:4000/v1"
	GatewayKeyPrefix          = "sk-gw-"
	gatewayKeyRandomLen       = 40
	GatewayKeyHashKeyName     = "gateway-keys" // the server key gateway key values are hashed under
	MaxGatewayKeyNameLen      = 80
	GatewayKeyActive          = "active"
	GatewayKeyRevoked         = "revoked"
	GatewayKeyExpired         = "expired" // not revoked, past expires_at
	CodeGatewayKeyNotFound    = "gateway_key_not_found"
	CodeGatewayKeyRevoked     = "gateway_key_revoked"
	CodeValueShownOnce        = "value_shown_once" // warning: the value is not in this answer
	RecoveryGatewayKeyCreated = "gateway_key_created"
	RecoveryGatewayKeyRotated = "gateway_key_rotated"
)

// GatewayKey is the metadata of an AI gateway key. Its value is never
// stored: only HMAC-SHA256 of it under the server key GatewayKeyHashKeyName.
type GatewayKey struct {
	ID         int64
	Name       string
	Tier       *string
	CreatedBy  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	RotatedAt  *time.Time
	RevokedAt  *time.Time
	ExpiresAt  *time.Time // nil: never expires
	LastUsedAt *time.Time // last verified use, as flushed by a replica; nil: never used
}

// Status at now: GatewayKeyRevoked once the key is revoked (whatever its
// expiry), else GatewayKeyExpired from expires_at on, else GatewayKeyActive.
func (k GatewayKey) Status(now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return GatewayKeyRevoked
	case GatewayKeyExpiredAt(k.ExpiresAt, now):
		return GatewayKeyExpired
	}
	return GatewayKeyActive
}

// GatewayKeyExpiredAt reports whether a key with this expiry no longer opens
// the gateway at now: expiry is the first instant it is refused.
func GatewayKeyExpiredAt(expiresAt *time.Time, now time.Time) bool {
	return expiresAt != nil && !now.Before(*expiresAt)
}

// IssuedGatewayKey is a key as a create or a rotation returns it: with the
// fresh value, which exists nowhere else. Value is "" when a keyed create is
// resumed (the value cannot be recovered).
type IssuedGatewayKey struct {
	GatewayKey
	Value string
}

// NewGatewayKey is a create request.
type NewGatewayKey struct {
	Name      string
	Tier      *string
	ExpiresAt *time.Time // nil: never expires; else it must lie in the future
}

// CheckGatewayKeyExpiry is the rule of a new key's expiry: none, or an
// instant after now (422 validation_failed naming expires_at).
func CheckGatewayKeyExpiry(expiresAt *time.Time, now time.Time) error {
	if expiresAt != nil && !expiresAt.After(now) {
		return Invalid("expires_at", CodeValidationFailed, "expires_at must lie in the future (or be null: never)")
	}
	return nil
}

// GatewayKeyRotation is a rotate request: the key's next expiry. Unset
// keeps the current one; null means never; a value must lie in the future.
type GatewayKeyRotation struct {
	ExpiresAt Patch[time.Time]
}

// Check is the rule of rotating k at now: a new expiry lies in the future,
// and an expired key needs one, since a kept expiry would give it a value
// that opens nothing (422 validation_failed naming expires_at).
func (r GatewayKeyRotation) Check(k GatewayKey, now time.Time) error {
	if r.ExpiresAt.Set {
		if r.ExpiresAt.Null {
			return nil
		}
		return CheckGatewayKeyExpiry(&r.ExpiresAt.Value, now)
	}
	if GatewayKeyExpiredAt(k.ExpiresAt, now) {
		return Invalid("expires_at", CodeValidationFailed, "gateway key %d expired at %s; a rotation "+
			"keeps the expiry, so send a new expires_at (a future instant, or null: never) with it",
			k.ID, k.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// NextExpiry is the expiry after a rotation of a key that expires at
// current (nil: never).
func (r GatewayKeyRotation) NextExpiry(current *time.Time) *time.Time {
	switch {
	case !r.ExpiresAt.Set:
		return current
	case r.ExpiresAt.Null:
		return nil
	}
	v := r.ExpiresAt.Value
	return &v
}

// GatewayTier is a serving tier of the catalogue and how many rows name it.
type GatewayTier struct {
	Name   string
	Models int
}

// GatewayKeyFilter narrows the key list.
type GatewayKeyFilter struct {
	Status []string `json:"status,omitempty"` // any of active, expired, revoked
}

// NewGatewayKeyValue draws a fresh key value: GatewayKeyPrefix and 40
// random base62 characters.
func NewGatewayKeyValue() string { return GatewayKeyPrefix + randomBase62(gatewayKeyRandomLen) }

// GatewayKeyShaped reports whether a presented value has the shape of a key,
// so a malformed one is refused before any lookup.
func GatewayKeyShaped(v string) bool {
	rest, ok := strings.CutPrefix(v, GatewayKeyPrefix)
	if !ok || len(rest) != gatewayKeyRandomLen {
		return false
	}
	for i := range len(rest) {
		if !isBase62(rest[i]) {
			return false
		}
	}
	return true
}

// AIGateway reads the gateway's tiers from the catalogue and keeps gateway
// keys. Create and rotate return the new value once; every change records
// one audit event whose states carry key_hash, nulled by the redaction, and
// publishes GatewayKeyChanged after commit. GatewayKeyOpener feeds the
// replicas' views of live keys.
type AIGateway interface {
	GatewayKeyOpener
	GatewayTierNames(ctx context.Context) ([]string, error)
	ListGatewayTiers(ctx context.Context, q PageQuery) (Page[GatewayTier], error)
	ListGatewayKeys(ctx context.Context, f GatewayKeyFilter, q PageQuery) (Page[GatewayKey], error)
	GetGatewayKey(ctx context.Context, id int64) (*GatewayKey, error)
	CreateGatewayKey(ctx context.Context, a Actor, k NewGatewayKey, l *Lease) (IssuedGatewayKey, error)
	RotateGatewayKey(ctx context.Context, a Actor, id int64, r GatewayKeyRotation,
		l *Lease) (IssuedGatewayKey, error)
	RevokeGatewayKey(ctx context.Context, a Actor, id int64) error
}
